/**
 * Work that waits for the transaction around it to commit, and never happens if it rolls back: telling
 * other processes of a change (src/platform/ChangeFeed.ts `announce`).
 *
 * Why not a NOTIFY inside the transaction, which PostgreSQL itself delivers at commit: a transaction that
 * has sent one takes a lock shared by the whole database cluster before it commits and holds it until its
 * commit is on disk, so every notifying commit waits for the previous one's WAL flush — no two flush
 * together. With the payment's change notice inside its insert, the plain peer of bench/requests.ts
 * (the same statement, nothing else) fell from 5,238 to 2,969 creations/s on this machine: the cluster's
 * rate of payments, whatever number of processes, would be one flush at a time.
 *
 * So the transaction collects what it has to announce, and its outermost commit hands it on: a savepoint
 * rolled back drops what was collected inside it, a transaction rolled back drops everything. Outside a
 * transaction, the work runs at once (the statement before it has committed).
 *
 * `runAfterCommit` wraps the client's `withTransaction` (each transaction its own list; on success the
 * list goes to the enclosing one, or runs after the outermost commit); the database layer installs it
 * when it builds the client (runtime/Database.ts). test/platform/AfterCommit.test.ts shows the rules.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, FiberRef } from "effect"

/** What the innermost enclosing transaction will run once committed; undefined outside a transaction. */
const pendingAfterCommit = FiberRef.unsafeMake<Array<Effect.Effect<void>> | undefined>(undefined)

/** Runs `work` once the enclosing transaction commits (never, if it rolls back); at once outside one. */
export const afterCommit = (work: Effect.Effect<void>): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(pendingAfterCommit), (pending) =>
    pending === undefined ? work : Effect.sync(() => {
      pending.push(work)
    }))

const wrapped = new WeakSet<SqlClient>()

/** Makes `sql`'s transactions run what `afterCommit` gave them. Idempotent. */
export const runAfterCommit = (sql: SqlClient): void => {
  if (wrapped.has(sql)) return
  wrapped.add(sql)
  const libraryTransaction = sql.withTransaction
  // Uninterruptible but for the transaction's own work, as the library's is: an interruption (a client
  // gone mid-request) between the commit and the hand-on would lose what the commit promised.
  const withTransaction: SqlClient["withTransaction"] = (effect) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(FiberRef.get(pendingAfterCommit), (enclosing) => {
        const pending: Array<Effect.Effect<void>> = []
        return Effect.tap(
          libraryTransaction(restore(Effect.locally(effect, pendingAfterCommit, pending))),
          () =>
            pending.length === 0
              ? Effect.void
              : enclosing === undefined
              ? Effect.all(pending, { discard: true })
              : Effect.sync(() => {
                enclosing.push(...pending)
              })
        )
      })
    )
  ;(sql as { withTransaction: SqlClient["withTransaction"] }).withTransaction = withTransaction
}
