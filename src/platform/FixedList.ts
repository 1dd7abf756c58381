/**
 * Paging of the short constant lists of this area (the marketplace, the plans, a store's channels), like
 * every list (API.md "Lists"): the order is fixed, so a cursor names the key of a page's last item; a key
 * no longer in the list makes the cursor invalid (400), and the client starts over.
 */
import { Effect } from "effect"
import { InvalidRequest } from "../../domain/Errors.ts"
import type { ListParams } from "./Pagination.ts"

const encode = (key: string) => Buffer.from(key, "utf8").toString("base64url")

export const fixedPage = <A>(items: ReadonlyArray<A>, keyOf: (item: A) => string, params: ListParams) =>
  Effect.gen(function*() {
    let start = 0
    if (params.cursor !== undefined) {
      const index = items.findIndex((item) => encode(keyOf(item)) === params.cursor)
      if (index < 0) {
        return yield* new InvalidRequest({
          message: "cursor is not valid: pass the next_cursor of the previous page unchanged",
          param: "cursor"
        })
      }
      start = index + 1
    }
    const data = items.slice(start, start + params.limit)
    const last = data[data.length - 1]
    const hasMore = start + params.limit < items.length && last !== undefined
    return { object: "list" as const, data, has_more: hasMore, next_cursor: hasMore ? encode(keyOf(last)) : null }
  })
