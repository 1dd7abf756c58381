/**
 * The console RPC (domain/Console.ts) served at CONSOLE_RPC_PATH over HTTP with newline-delimited JSON,
 * on the same router as the HttpApi, so it shares the server and its request middleware. Handlers are
 * thin: each calls the service the REST route calls, where the rules are.
 */
import { HttpLayerRouter } from "@effect/platform"
import { RpcSerialization, RpcServer } from "@effect/rpc"
import { Cause, Effect, Layer, Option, Stream } from "effect"
import { CONSOLE_RPC_PATH, ConsoleAuthentication, ConsoleRpcs } from "../../domain/Console.ts"
import { Unauthorized } from "../../domain/Errors.ts"
import { Refund } from "../../domain/Payments.ts"
import { isApiKeySecret } from "../accounts/Authentication.ts"
import { AccountsService } from "../accounts/Service.ts"
import { outcomeValue } from "../platform/Idempotency.ts"
import { GamesService } from "../games/Service.ts"
import { LoyaltyService } from "../loyalty/Service.ts"
import { PaymentsService } from "../payments/Service.ts"

/**
 * What a client learns of a defect (a bug, the database down): that it happened, as the REST routes' 500
 * says it; the cause goes to the log. Without this the RPC protocol would send the defect's own message.
 */
class InternalError extends Error {
  override readonly name = "InternalError"
  constructor() {
    super("An internal error occurred; it has been logged")
  }
}

const defectOnly = (cause: Cause.Cause<unknown>) => Cause.isDie(cause) && !Cause.isInterruptedOnly(cause)

const hideDefects = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.catchAllCause(effect, (cause) =>
    defectOnly(cause)
      ? Effect.zipRight(Effect.logError("console RPC failed", cause), Effect.die(new InternalError()))
      : Effect.failCause(cause))

const hideStreamDefects = <A, E, R>(stream: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
  Stream.catchAllCause(stream, (cause) =>
    defectOnly(cause)
      ? Stream.fromEffect(Effect.zipRight(Effect.logError("console RPC failed", cause), Effect.die(new InternalError())))
      : Stream.failCause(cause))

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/** `Authorization: Bearer <session token>` → the signed-in user; API keys are not console credentials. */
export const ConsoleAuthenticationLive = Layer.effect(
  ConsoleAuthentication,
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    return ConsoleAuthentication.of(({ headers }) =>
      Effect.gen(function*() {
        const credential = BEARER.exec(headers["authorization"] ?? "")?.[1]
        if (credential === undefined) {
          return yield* new Unauthorized({ message: "Send a session token: Authorization: Bearer <session token>" })
        }
        if (isApiKeySecret(credential)) {
          return yield* new Unauthorized({
            message: "The console takes a user session token from /auth/login; API keys are for the merchant API"
          })
        }
        const principal = yield* accounts.authenticateSession(credential)
        if (Option.isNone(principal)) {
          return yield* new Unauthorized({ message: "The session token is unknown, revoked or expired" })
        }
        return principal.value
      }).pipe(hideDefects)
    )
  })
)

export const ConsoleHandlersLive = ConsoleRpcs.toLayer(Effect.gen(function*() {
  const payments = yield* PaymentsService
  const loyalty = yield* LoyaltyService
  const games = yield* GamesService
  return ConsoleRpcs.of({
    ListPayments: ({ cursor, limit, livemode, status, store_id }) =>
      hideDefects(payments.listForStore(store_id, livemode, { limit, cursor, status })),
    GetPayment: ({ id }) => hideDefects(payments.retrieve(id)),
    RefundPayment: ({ id, idempotency_key, ...refund }) =>
      hideDefects(payments.refund(id, refund, idempotency_key).pipe(Effect.flatMap(outcomeValue(Refund)))),
    StoreSummary: ({ livemode, store_id }) => hideDefects(payments.summary(store_id, livemode)),
    PaymentFeed: ({ livemode, store_id }) => hideStreamDefects(Stream.unwrap(payments.feed(store_id, livemode))),
    WalletFeed: ({ customer_id }) => hideStreamDefects(Stream.unwrap(loyalty.walletFeed(customer_id))),
    GamePlaysFeed: ({ game_id }) => hideStreamDefects(Stream.unwrap(games.playsFeed(game_id)))
  })
}))

/** The `POST /rpc` route, with its handlers, authentication and serialization. */
export const ConsoleRpcLive: Layer.Layer<never, never, HttpLayerRouter.HttpRouter | PaymentsService | LoyaltyService | GamesService | AccountsService> =
  RpcServer.layerHttpRouter({
    group: ConsoleRpcs,
    path: CONSOLE_RPC_PATH,
    protocol: "http",
    // A defect fails its own request (hidden above), not every request of the connection.
    disableFatalDefects: true
  }).pipe(
    Layer.provide([ConsoleHandlersLive, ConsoleAuthenticationLive, RpcSerialization.layerNdjson])
  )
