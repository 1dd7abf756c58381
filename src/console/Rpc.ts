/**
 * The console RPC (domain/Console.ts) served at CONSOLE_RPC_PATH over HTTP with newline-delimited JSON,
 * on the same router as the HttpApi, so it shares the server and its request middleware. Handlers are
 * thin: each calls the service the REST route calls, where the rules are.
 */
import type { Sharding } from "@effect/cluster/Sharding"
import { HttpLayerRouter } from "@effect/platform"
import { RpcSerialization, RpcServer } from "@effect/rpc"
import { Cause, Effect, Layer, Option, Stream } from "effect"
import {
  CONSOLE_RPC_PATH,
  ConsoleAuthentication,
  ConsoleCoreRpcs,
  ConsoleStore,
  HomeMetrics,
  PaymentDetail
} from "../../domain/Console.ts"
import { ConsoleRpcs } from "../../domain/ConsoleRpcs.ts"
import { Forbidden, Unauthorized } from "../../domain/Errors.ts"
import { MAX_LIST_LIMIT } from "../../domain/Lists.ts"
import { Payment, Refund } from "../../domain/Payments.ts"
import { isApiKeySecret } from "../accounts/Authentication.ts"
import { AccountsService } from "../accounts/Service.ts"
import { AnalyticsService } from "../analytics/Service.ts"
import { ApiKeysService } from "../apikeys/Service.ts"
import { WebhooksService } from "../webhooks/Service.ts"
import { CustomersService } from "../customers/Service.ts"
import { PromotionsService } from "../promotions/Service.ts"
import { ReferralsService } from "../referrals/Service.ts"
import { SegmentsService } from "../segments/Service.ts"
import { AppConfig } from "../platform/Config.ts"
import { outcomeValue } from "../platform/Idempotency.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { GamesService } from "../games/Service.ts"
import { LoyaltyService } from "../loyalty/Service.ts"
import { PaymentsService } from "../payments/Service.ts"
import { StoresService } from "../stores/Service.ts"
import { AccountHandlersLive } from "./rpc/Account.ts"
import { consoleContext } from "./Context.ts"
import { hideDefects, hideStreamDefects } from "./rpc/Defects.ts"
import { DeveloperHandlersLive } from "./rpc/Developer.ts"
import { BillingService } from "../billing/Service.ts"
import { LinksService } from "../links/Service.ts"
import { VerificationService } from "../verification/Service.ts"
import { ConsoleBillingLive } from "./rpc/Billing.ts"
import { ConsoleLinksLive } from "./rpc/Links.ts"
import { ConsoleStoresLive } from "./rpc/Stores.ts"
import { ConsoleTeamLive } from "./rpc/Team.ts"
import { ConsoleWebhooksLive } from "./rpc/Webhooks.ts"
import { ConsoleEngagementHandlersLive } from "./rpc/Engagement.ts"
import { ConsoleGamesLive } from "./rpc/Games.ts"
import { ConsoleInsightsLive } from "./rpc/Insights.ts"
import { ConsoleIntegrationsLive } from "./rpc/Integrations.ts"
import { ConsolePlatformLive } from "./rpc/Platform.ts"
import { AiService } from "../ai/Service.ts"
import { ConnectorsService } from "../connectors/Service.ts"
import { LedgerService } from "../ledger/Service.ts"
import { NotificationsService } from "../notifications/Service.ts"
import { RevenueSharesService } from "../revenue-shares/Service.ts"
import { RiskService } from "../risk/Service.ts"
import { SecurityService } from "../security/Service.ts"
import { SettingsService } from "../settings/Service.ts"
import { isOwnOrigin, sessionTokenOfCookie } from "./Session.ts"

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i

/**
 * The signed-in user of a console call: the session cookie (the console in a browser), or
 * `Authorization: Bearer <session token>` (programs). A call with the cookie must come from the service's
 * own origin; API keys are never console credentials.
 */
export const ConsoleAuthenticationLive = Layer.effect(
  ConsoleAuthentication,
  Effect.gen(function*() {
    const accounts = yield* AccountsService
    const context = yield* Effect.context<AppConfig | PublicBaseUrl>()
    return ConsoleAuthentication.of(({ headers }) =>
      Effect.gen(function*() {
        const bearer = BEARER.exec(headers["authorization"] ?? "")?.[1]
        const cookie = sessionTokenOfCookie(headers["cookie"])
        const credential = bearer ?? Option.getOrUndefined(cookie)
        if (credential === undefined) {
          return yield* new Unauthorized({
            message: "Sign in to the console, or send a session token: Authorization: Bearer <session token>"
          })
        }
        if (isApiKeySecret(credential)) {
          return yield* new Unauthorized({
            message: "The console takes a user session token from /auth/login; API keys are for the merchant API"
          })
        }
        if (bearer === undefined) {
          const ownOrigin = yield* isOwnOrigin({ origin: headers["origin"], host: headers["host"] }).pipe(Effect.provide(context))
          if (!ownOrigin) {
            return yield* new Forbidden({ message: "Console calls with the session cookie must come from the console's own origin" })
          }
        }
        const principal = yield* accounts.authenticateSession(credential)
        if (Option.isNone(principal)) {
          return yield* new Unauthorized({ message: "The session is unknown, signed out or expired; sign in again" })
        }
        return principal.value
      }).pipe(hideDefects)
    )
  })
)

/** The core group's handlers; each area's group has its own layer in `src/console/rpc/<Area>.ts`. */
export const ConsoleHandlersLive = ConsoleCoreRpcs.toLayer(Effect.gen(function*() {
  const payments = yield* PaymentsService
  const loyalty = yield* LoyaltyService
  const games = yield* GamesService
  const accounts = yield* AccountsService
  const stores = yield* StoresService
  const analytics = yield* AnalyticsService
  const apiKeys = yield* ApiKeysService
  const webhooks = yield* WebhooksService
  return ConsoleCoreRpcs.of({
    ListPayments: ({ cursor, limit, livemode, store_id, ...filters }) =>
      hideDefects(payments.listForStore(store_id, livemode, { limit, cursor, ...filters })),
    Context: () => hideDefects(consoleContext.pipe(Effect.provideService(AccountsService, accounts), Effect.provideService(StoresService, stores))),
    MfaSetup: () => hideDefects(accounts.mfaSetup()),
    MfaEnable: (input) => hideDefects(accounts.mfaEnable(input)),
    ChangePassword: (input) => hideDefects(accounts.changePassword(input)),
    CreateStore: (input) =>
      hideDefects(stores.create(input).pipe(
        Effect.map((store) => new ConsoleStore({ id: store.id, organization_id: store.organization_id, name: store.name, live_mode: store.live_mode }))
      )),
    PaymentDetail: ({ id }) =>
      hideDefects(Effect.gen(function*() {
        const payment = yield* payments.retrieve(id)
        const refunds = yield* payments.refunds(id, { limit: MAX_LIST_LIMIT })
        return new PaymentDetail({ payment, refunds })
      })),
    CreateTestPayment: ({ idempotency_key, store_id, ...input }) =>
      hideDefects(payments.createTest(store_id, input, idempotency_key).pipe(Effect.flatMap(outcomeValue(Payment)))),
    SimulatePayment: ({ id, status }) => hideDefects(payments.simulateTest(id, status)),
    HomeMetrics: ({ livemode, store_id }) =>
      hideDefects(Effect.gen(function*() {
        const summary = yield* payments.summary(store_id, livemode)
        const revenue = yield* analytics.timeseries(store_id, { livemode })
        return new HomeMetrics({ summary, revenue })
      })),
    GetPayment: ({ id }) => hideDefects(payments.retrieve(id)),
    RefundPayment: ({ id, idempotency_key, ...refund }) =>
      hideDefects(payments.refund(id, refund, idempotency_key).pipe(Effect.flatMap(outcomeValue(Refund)))),
    ListApiKeys: ({ cursor, store_id }) => hideDefects(apiKeys.list(store_id, { limit: MAX_LIST_LIMIT, cursor })),
    CreateApiKey: (input) => hideDefects(apiKeys.create(input)),
    RotateApiKey: ({ id }) => hideDefects(apiKeys.rotate(id)),
    RevokeApiKey: ({ id }) => hideDefects(apiKeys.revoke(id)),
    ListWebhookEndpoints: ({ cursor, store_id }) => hideDefects(webhooks.list(store_id, { limit: MAX_LIST_LIMIT, cursor })),
    CreateWebhookEndpoint: (input) => hideDefects(webhooks.create(input)),
    SetWebhookEndpointEnabled: ({ enabled, id }) => hideDefects(webhooks.update(id, { enabled })),
    DeleteWebhookEndpoint: ({ id }) => hideDefects(webhooks.remove(id)),
    WebhookDeliveries: ({ cursor, id }) => hideDefects(webhooks.deliveries(id, { limit: MAX_LIST_LIMIT, cursor })),
    ResendWebhookDelivery: ({ id }) => hideDefects(webhooks.resend(id)),
    StoreSummary: ({ livemode, store_id }) => hideDefects(payments.summary(store_id, livemode)),
    PaymentFeed: ({ livemode, store_id }) => hideStreamDefects(Stream.unwrap(payments.feed(store_id, livemode))),
    WalletFeed: ({ customer_id }) => hideStreamDefects(Stream.unwrap(loyalty.walletFeed(customer_id))),
    GamePlaysFeed: ({ game_id }) => hideStreamDefects(Stream.unwrap(games.playsFeed(game_id)))
  })
}))

/** The `POST /rpc` route, with its handlers, authentication and serialization. */
export const ConsoleRpcLive: Layer.Layer<
  never,
  never,
  | HttpLayerRouter.HttpRouter
  | PaymentsService
  | LoyaltyService
  | GamesService
  | AccountsService
  | StoresService
  | AnalyticsService
  | ApiKeysService
  | WebhooksService
  | VerificationService
  | LinksService
  | BillingService
  | CustomersService
  | ReferralsService
  | SegmentsService
  | PromotionsService
  // A cleared referral releases its held points through the customer's wallet entity.
  | Sharding
  | LedgerService
  | RiskService
  | AiService
  | RevenueSharesService
  | ConnectorsService
  | NotificationsService
  | SettingsService
  | SecurityService
  | VerificationService
  | AppConfig
  | PublicBaseUrl
> =
  RpcServer.layerHttpRouter({
    group: ConsoleRpcs,
    path: CONSOLE_RPC_PATH,
    protocol: "http",
    // A defect fails its own request (hidden above), not every request of the connection.
    disableFatalDefects: true
  }).pipe(
    Layer.provide([
      ConsoleHandlersLive,
      // Each area's handlers, one line an area (src/console/rpc/<Area>.ts).
      AccountHandlersLive,
      DeveloperHandlersLive,
      ConsoleTeamLive,
      ConsoleStoresLive,
      ConsoleLinksLive,
      ConsoleBillingLive,
      ConsoleWebhooksLive,
      ConsoleEngagementHandlersLive,
      ConsoleGamesLive,
      ConsoleInsightsLive,
      ConsoleIntegrationsLive,
      ConsolePlatformLive,
      ConsoleAuthenticationLive,
      RpcSerialization.layerNdjson
    ])
  )
