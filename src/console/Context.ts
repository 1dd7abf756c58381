/**
 * What the console shows of the signed-in user before anything else: who they are, the stores they may
 * open and the role table. One definition for the `Context` RPC and for the console's page, which carries
 * it in its HTML so the first screen does not wait for a call to learn its store (and, on the payments list,
 * the list's first page, so its rows do not wait for one either).
 */
import { Effect, Option, Schema } from "effect"
import { CurrentPrincipal } from "../../domain/Auth.ts"
import {
  CarriedPayments,
  CONSOLE_CONTEXT_META,
  CONSOLE_PAYMENTS_META,
  CONSOLE_PAYMENTS_PAGE_SIZE,
  CONSOLE_PAYMENTS_PATH,
  ConsoleContext,
  ConsoleStore
} from "../../domain/console/Core.ts"
import { MAX_LIST_LIMIT } from "../../domain/Lists.ts"
import type { StoreList } from "../../domain/Stores.ts"
import { accessMatrix } from "../access/Policy.ts"
import { AccountsService } from "../accounts/Service.ts"
import { PaymentsService } from "../payments/Service.ts"
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

/** A carried value as a meta element's content: its JSON encoding, URI-encoded, so nothing in it can end the attribute. */
const metaContent = <A, I>(schema: Schema.Schema<A, I>, value: A) =>
  Effect.map(Schema.encode(schema)(value), (encoded) => encodeURIComponent(JSON.stringify(encoded)))

/** The built page's meta element `name`, empty, and the same element carrying `content`. */
const fillMeta = (html: string, name: string, content: string) =>
  html.replace(`name="${name}" content=""`, `name="${name}" content="${content}"`)

/**
 * The payments list's first page for the workspace a new tab opens on (the first store, test mode), as the
 * list asks for it (src/console/web/pages/PaymentsList.ts); none without a store.
 */
const firstPaymentsPage = (context: ConsoleContext) =>
  Effect.gen(function*() {
    const store = context.stores[0]
    if (store === undefined) return Option.none()
    const page = yield* (yield* PaymentsService).listForStore(store.id, false, { limit: CONSOLE_PAYMENTS_PAGE_SIZE })
    return Option.some(new CarriedPayments({ store_id: store.id, livemode: false, page }))
  })

/** Whether `path` opens the payments list (with or without a trailing slash). */
const opensPaymentsList = (path: string) => path === CONSOLE_PAYMENTS_PATH || path === `${CONSOLE_PAYMENTS_PATH}/`

/**
 * The console's HTML with the context of the session `token` in its CONSOLE_CONTEXT_META element and, when
 * `path` opens the payments list, the list's first page in its CONSOLE_PAYMENTS_META element. Or the HTML as
 * built when the token opens no session or the context cannot be read: the page then asks for it with the
 * `Context` call, as it does after signing in. The first page is only a head start: without it (no store, or
 * it could not be read) the page asks for its rows itself.
 */
export const withConsoleContext = (html: string, token: Option.Option<string>, path: string) =>
  Effect.gen(function*() {
    if (Option.isNone(token)) return html
    const principal = yield* (yield* AccountsService).authenticateSession(token.value)
    if (Option.isNone(principal)) return html
    const signedIn = Effect.provideService(CurrentPrincipal, principal.value)
    const context = yield* signedIn(consoleContext)
    const withContext = fillMeta(html, CONSOLE_CONTEXT_META, yield* metaContent(ConsoleContext, context))
    if (!opensPaymentsList(path)) return withContext
    return yield* signedIn(firstPaymentsPage(context)).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(withContext),
        onSome: (carried) => Effect.map(metaContent(CarriedPayments, carried), (content) => fillMeta(withContext, CONSOLE_PAYMENTS_META, content))
      })),
      Effect.catchAllCause(() => Effect.succeed(withContext))
    )
  }).pipe(Effect.catchAllCause(() => Effect.succeed(html)))
