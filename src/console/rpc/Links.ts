/** The payment links group's handlers: each one call of the links service. */
import { Effect } from "effect"
import { ConsoleLinksRpcs } from "../../../domain/console/Links.ts"
import { MAX_LIST_LIMIT } from "../../../domain/Lists.ts"
import { LinksService } from "../../links/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleLinksLive = ConsoleLinksRpcs.toLayer(Effect.gen(function*() {
  const links = yield* LinksService
  return ConsoleLinksRpcs.of({
    ListLinks: ({ cursor, kind, store_id }) => hideDefects(links.list(store_id, { limit: MAX_LIST_LIMIT, cursor, kind })),
    CreateLink: ({ store_id, ...input }) => hideDefects(links.create(store_id, input)),
    SetLinkActive: ({ active, id }) => hideDefects(links.update(id, { active }))
  })
}))
