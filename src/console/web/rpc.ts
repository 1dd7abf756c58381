/**
 * The one typed binding between React and the console RPC: every read goes through `useConsoleQuery`,
 * every change through `useConsoleMutation`, every live view through `useLiveFeed`. Components never call
 * fetch; they name an RPC of the typed client (domain/ConsoleClient.ts) and get its typed answer or a
 * `ConsoleFailure` with the envelope's code, message and field (`param`).
 */
import { FetchHttpClient } from "@effect/platform"
import { RpcClient } from "@effect/rpc"
import {
  type QueryKey,
  useMutation,
  type UseMutationResult,
  useQuery,
  useQueryClient,
  type UseQueryResult
} from "@tanstack/react-query"
import { Cause, Duration, Effect, Exit, Fiber, Layer, ManagedRuntime, Option, ParseResult, Schedule, Stream } from "effect"
import { useEffect, useRef, useSyncExternalStore } from "react"
import { ConsoleRpcs } from "../../../domain/ConsoleRpcs.ts"
import { ConsoleClient, type ConsoleClientShape, layerConsoleProtocolSameOrigin } from "../../../domain/ConsoleClient.ts"

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

const ClientLive = Layer.scoped(
  ConsoleClient,
  RpcClient.make(ConsoleRpcs).pipe(Effect.provide(layerConsoleProtocolSameOrigin(window.location.origin)))
).pipe(Layer.provide(FetchHttpClient.layer))

const runtime = ManagedRuntime.make(ClientLive)

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
  const exit = await runtime.runPromiseExit(Effect.flatMap(ConsoleClient, call))
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
    const once = Effect.flatMap(ConsoleClient, (client) =>
      Stream.runForEach(feed(client), (frame) =>
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
