/**
 * The HTTP server: the HttpApi served by HttpLayerRouter, /openapi.json and /docs from the same
 * definitions, one request middleware (request id, access log, the shared error envelope for the
 * framework's own failures), and a graceful shutdown.
 */
import { HttpApi, HttpLayerRouter, HttpMiddleware, HttpServer, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Context, Effect, Layer, Option, Predicate, Tracer } from "effect"
import { type IncomingMessage, Server, type ServerResponse } from "node:http"
import { Api } from "../domain/Api.ts"
import { CONSOLE_PATH, CONSOLE_REGISTER_PATH, CONSOLE_RPC_PATH, CONSOLE_SESSION_PATH } from "../domain/Console.ts"
import type { ErrorCode } from "../domain/Errors.ts"
import { API_VERSION, API_VERSION_HEADER } from "../domain/Version.ts"
import { Authentication } from "../domain/Auth.ts"
import { AuthenticationLive } from "../src/accounts/Authentication.ts"
import { PaymentsService } from "../src/payments/Service.ts"
import { MetricsService } from "../src/system/Metrics.ts"
import { SystemService } from "../src/system/Service.ts"
import { AuthHttpLive, MembersHttpLive, SessionHttpLive } from "../src/accounts/Http.ts"
import { BranchesHttpLive, StoresHttpLive } from "../src/stores/Http.ts"
import { CheckoutHttpLive } from "../src/checkout/Http.ts"
import { PaymentsHttpLive } from "../src/payments/Http.ts"
import { PublicBaseUrl } from "../src/platform/PublicUrl.ts"
import { docsRoutes } from "../src/system/Docs.tsx"
import { SystemHttpLive } from "../src/system/Http.ts"
import { HomeLive } from "../src/system/Home.tsx"
import { PageFontsLive } from "../src/platform/pages/Fonts.ts"
import { OpenApiDocumentLive } from "../src/system/Reference.ts"
import { VerificationHttpLive } from "../src/verification/Http.ts"
import { ApiKeysHttpLive } from "../src/apikeys/Http.ts"
import { SettingsHttpLive } from "../src/settings/Http.ts"
import { AccessHttpLive } from "../src/access/Http.ts"
import { WebhooksHttpLive } from "../src/webhooks/Http.ts"
import { LinksHttpLive, PublicLinksHttpLive } from "../src/links/Http.ts"
import { EcosystemHttpLive } from "../src/ecosystem/Http.ts"
import { CustomerConsoleHttpLive, CustomersHttpLive } from "../src/customers/Http.ts"
import { LoyaltyConsoleHttpLive, LoyaltyHttpLive, WalletHttpLive } from "../src/loyalty/Http.ts"
import { AnalyticsHttpLive } from "../src/analytics/Http.ts"
import { LedgerHttpLive } from "../src/ledger/Http.ts"
import { RevenueSharesHttpLive } from "../src/revenue-shares/Http.ts"
import { RiskHttpLive } from "../src/risk/Http.ts"
import { AiHttpLive } from "../src/ai/Http.ts"
import { ConnectorsHttpLive } from "../src/connectors/Http.ts"
import { NotificationsHttpLive } from "../src/notifications/Http.ts"
import { SecurityHttpLive } from "../src/security/Http.ts"
import { MailHttpLive } from "../src/mail/Http.ts"
import { BillingHttpLive } from "../src/billing/Http.ts"
import { ReferralLinkHttpLive, ReferralsConsoleHttpLive, ReferralsHttpLive } from "../src/referrals/Http.ts"
import { SegmentsHttpLive } from "../src/segments/Http.ts"
import { GamesConsoleHttpLive, GamesHttpLive, HostedGamesHttpLive } from "../src/games/Http.ts"
import { GamesService } from "../src/games/Service.ts"
import { Sharding } from "@effect/cluster/Sharding"
import { PromotionsHttpLive } from "../src/promotions/Http.ts"
import { ConsoleWebLive } from "../src/console/Http.ts"
import { ConsoleRpcLive } from "../src/console/Rpc.ts"
import { spanRouteOf } from "../src/platform/Metrics.ts"
import { AppConfig } from "../src/platform/Config.ts"
import { type RequestLogRecord, requestIdOf } from "../src/platform/RequestLog.ts"
import * as AccessLog from "./AccessLog.ts"
import { type GuardedRoute, guardRequests, isBodyTooLarge, maxBodySizeOf, payloadTooLarge, routeFinder } from "./RequestGuard.ts"
import { builtOn, builtOnFramework, withApplicationServicesOf } from "./RequestContext.ts"
import { answerClientErrors } from "./ClientErrors.ts"
import { ServicesLive } from "./Services.ts"
import { type DirectRoute, type DirectRoutes, statusStreamsOn } from "./StatusStreams.ts"

/** Routes served outside the HttpApi (documents, pages, the console RPC), for the method check below. */
const extraRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ["GET", "/"],
  ["GET", "/openapi.json"],
  ["GET", "/docs"],
  ["POST", CONSOLE_RPC_PATH],
  ["GET", CONSOLE_PATH],
  ["POST", CONSOLE_SESSION_PATH],
  ["DELETE", CONSOLE_SESSION_PATH],
  ["POST", CONSOLE_REGISTER_PATH]
]

const toPattern = (path: string): RegExp =>
  new RegExp(
    "^" + path.split("/").map((segment) => segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("/") + "/?$"
  )

/** Every method and path template the server answers, so a wrong method can be told from an unknown path. */
export const knownRoutes = (api: HttpApi.HttpApi.Any): ReadonlyArray<GuardedRoute> => {
  const routes: Array<GuardedRoute> = []
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push({
        method: endpoint.method,
        path: endpoint.path,
        pattern: toPattern(endpoint.path),
        hasPayload: Option.isSome(endpoint.payloadSchema),
        servedByApi: true
      })
    }
  })
  for (const [method, path] of extraRoutes) routes.push({ method, path, pattern: toPattern(path), hasPayload: false, servedByApi: false })
  return routes
}

/** Every route the server answers, and the lookup of a request's, made once when it arrives (runtime/AccessLog.ts). */
const ROUTES = knownRoutes(Api)
const findRoute = routeFinder(ROUTES)

/** The server's requests, each with its id, path, route and access-log record from its arrival. */
export class RequestTracker extends Context.Tag("runtime/RequestTracker")<RequestTracker, AccessLog.RequestTracker<GuardedRoute>>() {}

const RequestTrackerLive = Layer.effect(
  RequestTracker,
  AccessLog.makeRequestTracker({ findRoute, patternOf: (route) => route.path, responseHeaders: { [API_VERSION_HEADER]: API_VERSION } })
)

/** What the server found of `request` when it arrived; found now for a request that did not come through it. */
const trackedOf = (tracker: AccessLog.RequestTracker<GuardedRoute>, request: HttpServerRequest.HttpServerRequest) => {
  const tracked = tracker.trackedOf(request.source)
  if (tracked !== undefined) return tracked
  const { path, query } = AccessLog.partsOf(request.url)
  const id = requestIdOf(request.headers["x-request-id"])
  return { id, path, query, route: findRoute(request.method, path), record: { id } }
}

/**
 * Which requests get no span of their own from the HTTP server: those of the API's routes, when no tracer
 * exports spans (runtime/Telemetry.ts). Such a span then reached no one, and made a third of what `/health`
 * cost (the URL parsed, the headers copied and redacted, a span with its attributes, the request's context
 * copied): the server knows the route for the metric without it. Pages, documents and the console keep
 * theirs: the router names their route on it.
 */
const untracedRequests = (tracker: AccessLog.RequestTracker<GuardedRoute>, tracesExported: boolean) =>
(request: HttpServerRequest.HttpServerRequest): boolean =>
  !tracesExported && trackedOf(tracker, request).route?.servedByApi === true

const errorResponse = (status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({ error: { code, message } }, { status, headers })

/**
 * For a request outside the HttpApi, the route pattern the router matched (it writes it on the request's
 * span, which middleware around the router runs in) for the request's metric: the server's own lookup
 * knows the API's routes and the few pages only.
 */
const nameRouterRoute = (record: RequestLogRecord) => () =>
  Effect.withFiberRuntime<void>((fiber) => {
    const span = fiber.currentContext.unsafeMap.get(Tracer.ParentSpan.key) as Tracer.AnySpan | undefined
    const route = spanRouteOf(span)
    if (route !== undefined) record.route = route
    return Effect.void
  })

/**
 * The outermost middleware. It guards what the routes read (runtime/RequestGuard.ts) and renders every
 * failure the handlers did not render themselves in the shared envelope — unknown route, wrong method,
 * unreadable body, defect. The server gave the request its id and writes its access line
 * (runtime/AccessLog.ts); the loggers give the id to the request's other lines (`withRequestIds`).
 */
export const RequestMiddlewareLive = HttpLayerRouter.middleware(
  Effect.gen(function*() {
    const { maxBodyBytes } = yield* AppConfig
    const tracker = yield* RequestTracker
    const guard = guardRequests({ maxBodyBytes, routes: ROUTES })
    // The server runs requests in the framework's context (`servedInFrameworkContext`); the routes outside the HttpApi
    // read the application's services from theirs, so they get them here.
    const withApplicationServices = withApplicationServicesOf(yield* Effect.context<never>())

    const renderFailure = (request: HttpServerRequest.HttpServerRequest, path: string) =>
    (cause: Cause.Cause<unknown>): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> => {
      const failure = Cause.squash(cause)
      if (Predicate.isTagged(failure, "RouteNotFound")) {
        const allowed = [...new Set(ROUTES.filter((route) => route.pattern.test(path)).map((route) => route.method))]
        return Effect.succeed(
          allowed.length > 0
            ? errorResponse(405, "method_not_allowed", `${request.method} is not supported on ${path}; use ${allowed.join(", ")}`, {
              allow: allowed.join(", ")
            })
            : errorResponse(404, "not_found", `No route for ${request.method} ${path}`)
        )
      }
      if (Predicate.isTagged(failure, "RequestError") && isBodyTooLarge(failure)) return Effect.succeed(payloadTooLarge(maxBodyBytes))
      if (Predicate.isTagged(failure, "RequestError") && (failure as { readonly reason?: string }).reason === "Decode") {
        return Effect.succeed(errorResponse(400, "invalid_request", "The request body could not be read as JSON"))
      }
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      return Effect.as(
        Effect.logError("request failed", cause),
        errorResponse(500, "internal_error", "An internal error occurred; it has been logged")
      )
    }

    return (httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const { path, query, route, record } = trackedOf(tracker, request)
        const guarded = guard(httpEffect, request, path, query, route)
        return route?.servedByApi === true
          ? Effect.catchAllCause(guarded, renderFailure(request, path))
          : withApplicationServices(guarded).pipe(Effect.catchAllCause(renderFailure(request, path)), Effect.tap(nameRouterRoute(record)))
      })
  }),
  { global: true }
)

/** The HttpApi groups of every area, one line each. */
export const ApiGroupsLive = Layer.mergeAll(
  // The groups of the requests every client makes most are built on only the services they use
  // (runtime/RequestContext.ts): what their handlers copy per request is then a handful of entries.
  SystemHttpLive.pipe(builtOn(Authentication, AppConfig, MetricsService, SystemService)),
  StoresHttpLive,
  BranchesHttpLive,
  VerificationHttpLive,
  AuthHttpLive,
  SessionHttpLive,
  MembersHttpLive,
  ApiKeysHttpLive,
  SettingsHttpLive,
  AccessHttpLive,
  WebhooksHttpLive,
  PaymentsHttpLive.pipe(builtOn(Authentication, PaymentsService)),
  CheckoutHttpLive,
  LinksHttpLive,
  PublicLinksHttpLive,
  EcosystemHttpLive,
  CustomersHttpLive,
  CustomerConsoleHttpLive,
  LoyaltyHttpLive,
  LoyaltyConsoleHttpLive,
  WalletHttpLive,
  ReferralsHttpLive,
  SegmentsHttpLive,
  PromotionsHttpLive,
  ReferralsConsoleHttpLive,
  ReferralLinkHttpLive,
  AnalyticsHttpLive,
  LedgerHttpLive,
  RevenueSharesHttpLive,
  RiskHttpLive,
  AiHttpLive,
  ConnectorsHttpLive,
  NotificationsHttpLive,
  SecurityHttpLive,
  BillingHttpLive,
  GamesConsoleHttpLive,
  GamesHttpLive.pipe(builtOn(Authentication, GamesService, Sharding)),
  HostedGamesHttpLive,
  MailHttpLive
).pipe(Layer.provide(AuthenticationLive))

/** Every route: the API, its OpenAPI document, the interactive reference, the console RPC. */
export const RoutesLive = Layer.mergeAll(
  // The HttpApi merges the context it is built in into every request's: the framework's entries and the
  // API's security middleware only (runtime/RequestContext.ts); its groups are built in the full one.
  HttpLayerRouter.addHttpApi(Api).pipe(builtOnFramework(Authentication), Layer.provide(ApiGroupsLive)),
  OpenApiDocumentLive,
  HomeLive,
  PageFontsLive,
  docsRoutes({ title: Option.getOrElse(Context.getOption(Api.annotations, OpenApi.Title), () => "API reference"), openApiPath: "/openapi.json" }),
  ConsoleRpcLive,
  ConsoleWebLive,
  RequestMiddlewareLive
)

/**
 * The Node HTTP server. On shutdown it stops accepting at once, lets in-flight requests finish, and
 * closes whatever connections remain (long-lived streams) after the grace period.
 */
/** The Node HTTP server itself, for the shutdown sequence. */
export class NodeServer extends Context.Tag("runtime/NodeServer")<NodeServer, RoutingServer>() {}

/**
 * The Node HTTP server, with a hook for the routes it answers itself (runtime/StatusStreams.ts) before
 * a request reaches the Effect handler. Every response, whichever answers it, carries the API version.
 */
export class RoutingServer extends Server<typeof AccessLog.ServerRequest, typeof AccessLog.ServerResponseWithIds> implements DirectRoutes {
  direct: DirectRoute | undefined = undefined

  constructor(private readonly tracker: AccessLog.RequestTracker<GuardedRoute>) {
    super(AccessLog.requestClasses)
    answerClientErrors(this)
  }

  override emit(event: string | symbol, ...args: Array<any>): boolean {
    if (event === "request") {
      const [request, response] = args as [IncomingMessage, ServerResponse]
      const { id } = this.tracker.track(request, response)
      if (this.direct !== undefined && this.direct(request, response, id)) return true
    }
    return super.emit(event as string, ...args)
  }
}

export const NodeServerLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const server = new RoutingServer(yield* RequestTracker)
    return Layer.succeed(NodeServer, server).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => server, { port: config.port, host: config.host }))
    )
  })
).pipe(Layer.provideMerge(RequestTrackerLive))

/**
 * Graceful shutdown. Built after the routes, so released before them: the server stops accepting at
 * once, idle keep-alive connections close, and requests in flight (including one still arriving on an
 * open connection) are answered while the handler and everything below it are still there. Whatever is
 * still open after the grace period (long-lived streams) is closed, then the rest of the process stops.
 */
export const DrainOnShutdownLive = Layer.scopedDiscard(Effect.gen(function*() {
  const server = yield* NodeServer
  const config = yield* AppConfig
  yield* Effect.addFinalizer(() =>
    Effect.async<void>((resume) => {
      const forceClose = setTimeout(() => server.closeAllConnections(), config.shutdownGraceSeconds * 1000)
      server.close(() => {
        clearTimeout(forceClose)
        resume(Effect.void)
      })
      server.closeIdleConnections()
    })
  )
}))

export const logListening = Effect.gen(function*() {
  const config = yield* AppConfig
  const server = yield* HttpServer.HttpServer
  const port = server.address._tag === "TcpAddress" ? server.address.port : config.port
  yield* (yield* PublicBaseUrl).serverBound(port)
  yield* Effect.logInfo(`listening on http://${config.host}:${port}`)
})

/**
 * The router's routes served as HttpLayerRouter.serve serves them, except that the server is built in the
 * framework's context only (runtime/RequestContext.ts): every request runs in (and copies) a context of
 * the framework's entries rather than of every service of the application. The HttpApi groups took their
 * services when they were built; the other routes get them from the request middleware.
 */
const servedInFrameworkContext = <A, E, R>(routes: Layer.Layer<A, E, R>) =>
  // Typed as `serve` types it: the routes' own requirements (the request, the router's) are met per request.
  Layer.unwrapScoped(
    Effect.map(HttpLayerRouter.HttpRouter, (router) => HttpServer.serve(router.asHttpEffect()).pipe(builtOnFramework()))
  ).pipe(
    Layer.provideMerge(routes),
    Layer.provide(HttpLayerRouter.layer)
  ) as unknown as ReturnType<typeof HttpLayerRouter.serve<A, E, R, never>>

/** Serves every route; requires the services the handlers use. */
export const HttpLive = Layer.unwrapEffect(Effect.gen(function*() {
  const { maxBodyBytes, telemetry } = yield* AppConfig
  const tracker = yield* RequestTracker
  return Layer.merge(
    servedInFrameworkContext(RoutesLive).pipe(
      HttpMiddleware.withTracerDisabledWhen(untracedRequests(tracker, Option.isSome(telemetry.otlpEndpoint))),
      Layer.provide(maxBodySizeOf(maxBodyBytes))
    ),
    Layer.unwrapEffect(Effect.map(NodeServer, statusStreamsOn))
  )
})).pipe(Layer.provide(ServicesLive))
