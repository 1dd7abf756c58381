/**
 * The public catalog of products, paged like every list. The catalog is a constant in a fixed order, so
 * a cursor names the last product of a page; a product removed from the catalog in a later release
 * makes its cursor invalid (400), which a client recovers from by starting over.
 */
import { HttpApi } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { EcosystemProduct, EcosystemProductList, type EcosystemProductStatus } from "../../domain/Ecosystem.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import type { ListParams } from "../platform/Pagination.ts"
import { type CatalogEntry, ECOSYSTEM_CATALOG } from "./Catalog.ts"
import { traced } from "../platform/Traced.ts"

const encodeCursor = (entry: CatalogEntry) => Buffer.from(entry.id, "utf8").toString("base64url")

const invalidCursor = new InvalidRequest({
  message: "cursor is not valid: pass the next_cursor of the previous page unchanged",
  param: "cursor"
})

/** Where the page after `cursor` starts in the catalog. */
const startAfter = (cursor: string | undefined) => {
  if (cursor === undefined) return Effect.succeed(0)
  const index = ECOSYSTEM_CATALOG.findIndex((entry) => encodeCursor(entry) === cursor)
  return index < 0 ? Effect.fail(invalidCursor) : Effect.succeed(index + 1)
}

/** A path template with its parameters blanked, so `/checkout/{id}` and `/checkout/:id` compare equal. */
const shapeOf = (path: string) => path.replace(/\{[^}]+\}|:[^/]+/g, "{}")

/**
 * The paths this build serves: every route of the API, and the reference served beside it. A product
 * is `available` when its starting path is one of them and `coming_soon` otherwise, so the catalog can
 * never advertise a route that answers 404.
 */
const servedPaths: ReadonlySet<string> = (() => {
  const paths = new Set(["/docs", "/openapi.json"].map(shapeOf))
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => void paths.add(shapeOf(endpoint.path))
  })
  return paths
})()

export const productStatus = (entry: CatalogEntry): EcosystemProductStatus =>
  servedPaths.has(shapeOf(entry.url_path)) ? "available" : "coming_soon"

const toProduct = (entry: CatalogEntry) =>
  new EcosystemProduct({ ...entry, object: "ecosystem_product", status: productStatus(entry) })

export class EcosystemService extends Effect.Service<EcosystemService>()("ecosystem/EcosystemService", {
  succeed: {
    products: traced("Ecosystem.products")(function*(params: ListParams) {
      const start = yield* startAfter(params.cursor)
      const entries = ECOSYSTEM_CATALOG.slice(start, start + params.limit)
      const last = entries[entries.length - 1]
      const hasMore = start + params.limit < ECOSYSTEM_CATALOG.length && last !== undefined
      return new EcosystemProductList({
        object: "list",
        data: entries.map(toProduct),
        has_more: hasMore,
        next_cursor: hasMore ? encodeCursor(last) : null
      })
    })
  }
}) {}
