/**
 * The one typed binding between React and the console RPC: every read goes through `useConsoleQuery`,
 * every change through `useConsoleMutation`, every live view through `useLiveFeed`. Components never call
 * fetch; they name an RPC of the typed client (domain/ConsoleClient.ts) and get its typed answer or a
 * `ConsoleFailure` with the envelope's code, message and field (`param`).
 */
import { FetchHttpClient, type HttpClient } from "@effect/platform"
import { RpcClient, type RpcGroup, RpcSerialization } from "@effect/rpc"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import {
  type QueryKey,
  useMutation,
  type UseMutationResult,
  useQuery,
  useQueryClient,
  type UseQueryResult
} from "@tanstack/react-query"
import { Cause, Duration, Effect, Exit, Fiber, Layer, ManagedRuntime, Option, ParseResult, Schedule, Scope, Stream } from "effect"
import { useEffect, useRef, useSyncExternalStore } from "react"
import type { ConsoleClientShape } from "../../../domain/ConsoleClient.ts"
import { CONSOLE_RPC_PATH, ConsoleShellRpcs } from "../../../domain/console/Core.ts"

/** What a failed call tells the page: the error code of the envelope, its message and the field at fault. */
export class ConsoleFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly param: string | undefined = undefined
  ) {
    super(message)
  }
  get connectionLost() {
    return this.code === "connection_lost"
  }
}

const CODES: Record<string, string> = {
  InvalidRequest: "invalid_request",
  Unauthorized: "unauthorized",
  MfaRequired: "mfa_required",
  Forbidden: "forbidden",
  NotFound: "not_found",
  InvalidState: "invalid_state",
  IdempotencyConflict: "idempotency_conflict",
  RateLimited: "rate_limited",
  ServiceUnavailable: "service_unavailable"
}

/** A form value the RPC's own schema refused before anything was sent: named at its field, like the server would. */
const invalidInput = (error: ParseResult.ParseError): ConsoleFailure => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const param = issue?.path.map(String).join(".")
  return new ConsoleFailure("invalid_request", issue?.message ?? "This value is not valid", param === "" ? undefined : param)
}

const toFailure = (cause: Cause.Cause<unknown>): ConsoleFailure => {
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect) && ParseResult.isParseError(defect.value)) return invalidInput(defect.value)
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value as { readonly _tag?: string; readonly message?: string; readonly param?: string }
    if (error._tag === "RpcClientError") return new ConsoleFailure("connection_lost", "The connection to the service was lost")
    const code = error._tag === undefined ? undefined : CODES[error._tag]
    if (code !== undefined) return new ConsoleFailure(code, error.message ?? code, error.param)
  }
  return new ConsoleFailure("internal_error", "Something went wrong on our side; try again in a moment")
}

/**
 * The console's procedures reach the browser in two parts: the core group (domain/console/Core.ts: the
 * context and the payments area) with the shell, and every group (domain/ConsoleRpcs.ts) in chunks of
 * their own, fetched the first time a page calls a procedure outside the core, so the first screen does
 * not carry the schemas of every area. Each part has its own RpcClient, made on first use; both go
 * through the one transport: HTTP with ndjson to the page's own origin, the session riding in its HttpOnly
 * cookie (sent by the browser, never seen by the page's script).
 */
type Transport = HttpClient.HttpClient | RpcSerialization.RpcSerialization
const runtime = ManagedRuntime.make(Layer.merge(FetchHttpClient.layer, RpcSerialization.layerNdjson))

type AnyClient = Readonly<Record<string, (...args: ReadonlyArray<unknown>) => unknown>>

/** A group's client, its procedures by tag (typed at the pages' end, by ConsoleClientShape). */
const connect = (group: object): Effect.Effect<AnyClient, never, Transport> =>
  Effect.gen(function*() {
    // The page's lifetime: a client is never closed.
    const scope = yield* Scope.make()
    const client = yield* RpcClient.make(group as RpcGroup.RpcGroup<never>).pipe(
      Effect.provide(RpcClient.layerProtocolHttp({ url: window.location.origin + CONSOLE_RPC_PATH })),
      Scope.extend(scope)
    )
    return client as unknown as AnyClient
  })

const coreClient = Effect.runSync(Effect.cached(connect(ConsoleShellRpcs)))

/** Every group's client, made once its chunk is loaded; a chunk that failed to load is asked for again next time. */
let everyGroupClient: Effect.Effect<AnyClient, never, Transport> | undefined
const anyGroupClient: Effect.Effect<AnyClient, RpcClientError, Transport> = Effect.suspend(() =>
  everyGroupClient ?? Effect.tryPromise({
    try: () => import("../../../domain/ConsoleRpcs.ts"),
    // Said like a lost connection: the page shows it is reconnecting, and a read is tried again.
    catch: (cause) => new RpcClientError({ reason: "Protocol", message: "The console's code could not be loaded", cause })
  }).pipe(Effect.flatMap(({ ConsoleRpcs }) => (everyGroupClient ??= Effect.runSync(Effect.cached(connect(ConsoleRpcs))))))
)

/** Loads every group's procedures ahead of their first call (routes.tsx, once the first screen is idle); never fails. */
export const preloadEveryGroup = (): Promise<void> => runtime.runPromise(Effect.asVoid(Effect.ignore(anyGroupClient)))

const clientFor = (tag: string) => ConsoleShellRpcs.requests.has(tag) ? coreClient : anyGroupClient

/** A typed client whose every procedure is `call(tag, args)`: pages name procedures before their group is loaded. */
const clientCalling = (call: (tag: string, args: ReadonlyArray<unknown>) => unknown): ConsoleClientShape =>
  new Proxy({}, {
    get: (_, tag) => typeof tag === "string" ? (...args: ReadonlyArray<unknown>) => call(tag, args) : undefined
  }) as ConsoleClientShape

/** The client pages' calls get: each procedure an Effect that makes sure its group's client is there first. */
const effectClient = clientCalling((tag, args) =>
  Effect.flatMap(clientFor(tag), (client) => client[tag]!(...args) as Effect.Effect<unknown, unknown>)
)

/** The client live feeds get: each streaming procedure a Stream, its group's client made first. */
const streamClient = clientCalling((tag, args) =>
  Stream.unwrap(Effect.map(clientFor(tag), (client) => client[tag]!(...args) as Stream.Stream<unknown, unknown>))
)

/** Signed-out listeners: a call answered `unauthorized` means the session ended (signed out, idle, revoked). */
const signedOutListeners = new Set<() => void>()
export const onSignedOut = (listener: () => void) => {
  signedOutListeners.add(listener)
  return () => {
    signedOutListeners.delete(listener)
  }
}

/** Calls the console RPC; resolves with the typed answer or rejects with a ConsoleFailure. */
export const callConsole = async <A, E>(call: (client: ConsoleClientShape) => Effect.Effect<A, E>): Promise<A> => {
  const exit = await runtime.runPromiseExit(Effect.suspend(() => call(effectClient)))
  if (Exit.isSuccess(exit)) {
    connection.set("online")
    return exit.value
  }
  const failure = toFailure(exit.cause)
  // A refused session names no field; a wrong code or password does, and leaves the session as it was.
  if (failure.code === "unauthorized" && failure.param === undefined) signedOutListeners.forEach((listener) => listener())
  if (failure.connectionLost) connection.set("reconnecting")
  throw failure
}

export const useConsoleQuery = <A, E>(
  key: QueryKey,
  call: (client: ConsoleClientShape) => Effect.Effect<A, E>,
  options: { readonly enabled?: boolean; readonly refetchIntervalMs?: number | false } = {}
): UseQueryResult<A, ConsoleFailure> =>
  useQuery<A, ConsoleFailure>({
    queryKey: key,
    queryFn: () => callConsole(call),
    enabled: options.enabled ?? true,
    refetchInterval: options.refetchIntervalMs ?? false
  })

export const useConsoleMutation = <A, E, V>(
  call: (client: ConsoleClientShape, variables: V) => Effect.Effect<A, E>,
  options: { readonly onSuccess?: (value: A, variables: V) => void } = {}
): UseMutationResult<A, ConsoleFailure, V> =>
  useMutation<A, ConsoleFailure, V>({
    mutationFn: (variables) => callConsole((client) => call(client, variables)),
    ...(options.onSuccess === undefined ? {} : { onSuccess: options.onSuccess })
  })

/** The state of the console's connection, for the "reconnecting" notice. */
type ConnectionState = "online" | "reconnecting"
const connection = (() => {
  let state: ConnectionState = "online"
  const listeners = new Set<() => void>()
  return {
    get: () => state,
    set: (next: ConnectionState) => {
      if (next === state) return
      state = next
      listeners.forEach((listener) => listener())
    },
    subscribe: (listener: () => void) => {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }
  }
})()

export const useConnectionState = () => useSyncExternalStore(connection.subscribe, connection.get)

/**
 * Follows a streaming RPC for as long as the component is mounted: each frame goes to `onFrame`. A feed
 * that ends (the server ends feeds after a while) or breaks (the connection was lost) is subscribed again,
 * at once the first time and then with a growing pause, and the page shows it is reconnecting meanwhile.
 */
export const useLiveFeed = <A, E>(
  key: string,
  feed: ((client: ConsoleClientShape) => Stream.Stream<A, E>) | undefined,
  onFrame: (frame: A) => void
) => {
  const handler = useRef(onFrame)
  handler.current = onFrame
  const queryClient = useQueryClient()
  useEffect(() => {
    if (feed === undefined) return
    const once = Effect.suspend(() =>
      Stream.runForEach(feed(streamClient), (frame) =>
        Effect.sync(() => {
          connection.set("online")
          handler.current(frame)
        }))).pipe(
        Effect.catchAllCause((cause) => {
          const failure = toFailure(cause)
          if (failure.code === "unauthorized") {
            signedOutListeners.forEach((listener) => listener())
            return Effect.interrupt
          }
          connection.set("reconnecting")
          return Effect.void
        })
      )
    const forever = once.pipe(
      Effect.zipRight(Effect.sleep(Duration.millis(200))),
      Effect.repeat(Schedule.exponential(Duration.millis(500)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5)))))
    )
    const fiber = runtime.runFork(forever)
    return () => {
      runtime.runFork(Fiber.interrupt(fiber))
    }
  }, [key, queryClient])
}
