/**
 * What the console shows of the signed-in user before anything else: who they are, the stores they may
 * open and the role table. One definition for the `Context` RPC and for the console's page, which carries
 * it in its HTML so the first screen does not wait for a call to learn its store.
 */
import { Effect, Option, Schema } from "effect"
import { CurrentPrincipal } from "../../domain/Auth.ts"
import { CONSOLE_CONTEXT_META, ConsoleContext, ConsoleStore } from "../../domain/console/Core.ts"
import { MAX_LIST_LIMIT } from "../../domain/Lists.ts"
import type { StoreList } from "../../domain/Stores.ts"
import { accessMatrix } from "../access/Policy.ts"
import { AccountsService } from "../accounts/Service.ts"
import { StoresService } from "../stores/Service.ts"

/** Every store the signed-in user may open, page after page. */
const allStores = Effect.gen(function*() {
  const stores = yield* StoresService
  const found: Array<ConsoleStore> = []
  let cursor: string | undefined = undefined
  do {
    const page: StoreList = yield* stores.list({ limit: MAX_LIST_LIMIT, cursor })
    for (const store of page.data) {
      found.push(new ConsoleStore({ id: store.id, organization_id: store.organization_id, name: store.name, live_mode: store.live_mode }))
    }
    cursor = page.has_more ? page.next_cursor ?? undefined : undefined
  } while (cursor !== undefined)
  return found
})

/** The signed-in user's console context. */
export const consoleContext = Effect.gen(function*() {
  const me = yield* (yield* AccountsService).me()
  return new ConsoleContext({ me, stores: yield* allStores, access: accessMatrix() })
})

/** The built page's empty context: the content attribute of its CONSOLE_CONTEXT_META element. */
const EMPTY_CONTEXT = `name="${CONSOLE_CONTEXT_META}" content=""`

/**
 * The console's HTML with the context of the session `token` in its CONSOLE_CONTEXT_META element: the
 * encoded context as JSON, URI-encoded, so the attribute holds only characters that cannot end it. Or the
 * HTML as built when the token opens no session or the context cannot be read: the page then asks for it
 * with the `Context` call, as it does after signing in.
 */
export const withConsoleContext = (html: string, token: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isNone(token)) return html
    const principal = yield* (yield* AccountsService).authenticateSession(token.value)
    if (Option.isNone(principal)) return html
    const context = yield* consoleContext.pipe(Effect.provideService(CurrentPrincipal, principal.value))
    const encoded = encodeURIComponent(JSON.stringify(yield* Schema.encode(ConsoleContext)(context)))
    return html.replace(EMPTY_CONTEXT, `name="${CONSOLE_CONTEXT_META}" content="${encoded}"`)
  }).pipe(Effect.catchAllCause(() => Effect.succeed(html)))
