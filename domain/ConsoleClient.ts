/**
 * The typed client of the console RPC, built from the same `ConsoleRpcs` the server implements: HTTP
 * with newline-delimited JSON to `<baseUrl>/rpc`, every request carrying the session token.
 *
 *   const console = yield* makeConsoleClient({ baseUrl, sessionToken })
 *   const page = yield* console.ListPayments({ store_id, livemode: false })
 *   yield* Stream.runForEach(console.PaymentFeed({ store_id }), (frame) => ...)
 *
 * It needs an `HttpClient` (e.g. `FetchHttpClient.layer`) and a `Scope`, which it lives in.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import type { RpcClientError } from "@effect/rpc/RpcClientError"
import type { RpcGroup } from "@effect/rpc"
import { Context, Effect, Layer, type Redacted, type Scope } from "effect"
import { CONSOLE_RPC_PATH } from "./Console.ts"
import { ConsoleRpcs } from "./ConsoleRpcs.ts"

export interface ConsoleClientOptions {
  /** The service's base URL, such as `https://pay.example.com`. */
  readonly baseUrl: string
  /** A session token from /auth/login. */
  readonly sessionToken: string | Redacted.Redacted<string>
}

export type ConsoleClientShape = RpcClient.RpcClient<RpcGroup.Rpcs<typeof ConsoleRpcs>, RpcClientError>

/** The client's transport: HTTP with ndjson to the console RPC, with `Authorization: Bearer <token>`. */
export const layerConsoleProtocol = (
  options: ConsoleClientOptions
): Layer.Layer<RpcClient.Protocol, never, HttpClient.HttpClient> =>
  RpcClient.layerProtocolHttp({
    url: options.baseUrl.replace(/\/+$/, "") + CONSOLE_RPC_PATH,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(options.sessionToken))
  }).pipe(Layer.provide(RpcSerialization.layerNdjson))

/** A console client for one session, open for as long as the scope. */
export const makeConsoleClient = (
  options: ConsoleClientOptions
): Effect.Effect<ConsoleClientShape, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    // Built in the caller's scope: the protocol must outlive this constructor.
    const protocol = yield* Layer.build(layerConsoleProtocol(options))
    return yield* RpcClient.make(ConsoleRpcs).pipe(Effect.provide(protocol))
  })

/** The console client as a service, for programs that take it from their context. */
export class ConsoleClient extends Context.Tag("domain/ConsoleClient")<ConsoleClient, ConsoleClientShape>() {
  static readonly layer = (options: ConsoleClientOptions): Layer.Layer<ConsoleClient, never, HttpClient.HttpClient> =>
    Layer.scoped(ConsoleClient, makeConsoleClient(options))
}
