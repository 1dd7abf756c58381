import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { prefersHtml } from "../platform/Html.ts"
import { linkPage } from "./Page.ts"
import { LinksService } from "./Service.ts"

const acceptHeader = Effect.map(HttpServerRequest.HttpServerRequest, (request) => request.headers["accept"])

export const LinksHttpLive = HttpApiBuilder.group(Api, "links", (handlers) =>
  Effect.gen(function*() {
    const links = yield* LinksService
    return handlers
      .handle("create", ({ path, payload }) => links.create(path.storeId, payload))
      .handle("list", ({ path, urlParams }) => links.list(path.storeId, urlParams))
      .handle("update", ({ path, payload }) => links.update(path.linkId, payload))
      .handle("delete", ({ path }) => links.remove(path.linkId))
  }))

export const PublicLinksHttpLive = HttpApiBuilder.group(Api, "publicLinks", (handlers) =>
  Effect.gen(function*() {
    const links = yield* LinksService
    return handlers
      .handle("view", ({ path }) =>
        Effect.gen(function*() {
          const link = yield* links.publicView(path.id)
          return prefersHtml(yield* acceptHeader) ? linkPage(link) : link
        }))
      .handle("pay", ({ path, payload }) => links.pay(path.id, payload))
  }))
