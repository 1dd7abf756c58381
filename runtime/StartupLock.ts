/**
 * Start-up runs one process at a time per database: from before the migrations until the cluster's own
 * tables exist. The cluster library creates and migrates its tables when its storage layers are built,
 * outside our migration transaction; two processes doing that at once on a fresh database can collide.
 * A session-level advisory lock, held on a reserved connection, serializes the whole sequence.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Ref } from "effect"

const STARTUP_LOCK_ID = 727_002

export class StartupLock extends Context.Tag("runtime/StartupLock")<StartupLock, {
  /** Lets the next process start; idempotent. */
  readonly release: Effect.Effect<void>
}>() {}

const acquire = Layer.scoped(
  StartupLock,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const connection = yield* sql.reserve
    yield* connection.executeRaw(`SELECT pg_advisory_lock(${STARTUP_LOCK_ID})`, [])
    const released = yield* Ref.make(false)
    const release = Effect.flatMap(Ref.getAndSet(released, true), (already) =>
      already
        ? Effect.void
        : connection.executeRaw(`SELECT pg_advisory_unlock(${STARTUP_LOCK_ID})`, []).pipe(Effect.ignore))
    // Released however start-up ends; the reserved connection goes back to the pool with the scope.
    yield* Effect.addFinalizer(() => release)
    return { release }
  }).pipe(Effect.orDie)
)

/** Taken on every database, the embedded one too: it costs one query when nobody else is starting. */
export const StartupLockLive = acquire

/** Built once the cluster's storage exists: the next process may start. */
export const ReleaseStartupLockLive = Layer.effectDiscard(Effect.flatMap(StartupLock, (lock) => lock.release))
