/**
 * The payments engine's background work, each a cluster singleton or cron so exactly one runner does
 * it and another takes over when that runner goes away:
 * - expiry: payments whose `expires_at` passed move to `expired` within about a second, whether or
 *   not anyone reads them, and after a restart too (the state is in the database, not in a timer);
 * - provider polling: open live payments are checked with the provider by their QR's md5;
 * - idempotency keys past their retention are purged.
 */
import { ClusterCron, Singleton } from "@effect/cluster"
import { FetchHttpClient } from "@effect/platform"
import { Cron, Duration, Effect, Layer } from "effect"
import { Idempotency } from "../platform/Idempotency.ts"
import { currentDate } from "../platform/Time.ts"
import { SettingsService } from "../settings/Service.ts"
import { PaymentEntity } from "./Entity.ts"
import { BakongConfig, BakongProvider } from "./Provider.ts"
import { PaymentsRepo } from "./Repo.ts"

const EXPIRY_BATCH = 200
const EXPIRY_INTERVAL = Duration.seconds(1)
/**
 * How long one expiry waits for its entity. A message sent while the payment's shard moves between
 * runners can wait for the new owner; the sweep must not wait with it, or every other due payment waits
 * too. Stopping to wait does not stop the message (the entity's messages are uninterruptible), and the
 * transition is keyed (`expire:expires_at`), so the next pass sending it again gets its one answer.
 */
const EXPIRY_CALL_TIMEOUT = Duration.seconds(10)
const PROVIDER_POLL_INTERVAL = Duration.seconds(5)
const PROVIDER_BATCH = 100

/**
 * One expiry pass: the open payments whose expiry has come by the Clock's now (a batch of them) are
 * expired by their entities. Answers how many were due.
 */
export const makeExpirySweep = Effect.gen(function*() {
  const repo = yield* PaymentsRepo
  const payments = yield* PaymentEntity.client
  return Effect.gen(function*() {
    const due = yield* repo.overdue(EXPIRY_BATCH, yield* currentDate)
    yield* Effect.forEach(
      due,
      (id) =>
        payments(id).Transition({ action: "expire", requestKey: "expires_at" }).pipe(
          // Paid or cancelled a moment before its expiry: nothing to do.
          Effect.catchTag("InvalidState", () => Effect.void),
          Effect.timeoutFail({
            duration: EXPIRY_CALL_TIMEOUT,
            onTimeout: () => new Error(`no answer within ${Duration.format(EXPIRY_CALL_TIMEOUT)}; the next pass sends it again`)
          }),
          Effect.catchAllCause((cause) => Effect.logWarning(`could not expire payment ${id}`, cause))
        ),
      { concurrency: 16, discard: true }
    )
    return due.length
  }).pipe(Effect.withSpan("Payments.expireOverdue"))
})

export const ExpirySweeperLive = Singleton.make(
  "payments/expiry",
  Effect.gen(function*() {
    const sweep = yield* makeExpirySweep
    while (true) {
      const expired = yield* sweep.pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("expiry sweep failed", cause), 0)))
      // A full batch means more are due: go again at once.
      if (expired < EXPIRY_BATCH) yield* Effect.sleep(EXPIRY_INTERVAL)
    }
  })
)

export const ProviderPollerLive = Singleton.make(
  "payments/provider-poll",
  Effect.gen(function*() {
    const repo = yield* PaymentsRepo
    const provider = yield* BakongProvider
    const payments = yield* PaymentEntity.client
    const pollOnce = Effect.gen(function*() {
      const open = yield* repo.openLive(PROVIDER_BATCH, yield* currentDate)
      yield* Effect.forEach(open, (payment) =>
        provider.checkTransaction(payment.qr_md5).pipe(
          Effect.flatMap((status) => {
            switch (status._tag) {
              case "NotFound":
                return Effect.void
              case "Failed":
                return payments(payment.id).Transition({ action: "fail", requestKey: "provider" })
              case "Paid":
                // The provider saw the money: the payment was scanned, then paid.
                return payments(payment.id).Transition({ action: "scan", requestKey: "provider" }).pipe(
                  Effect.catchTag("InvalidState", () => Effect.void),
                  Effect.zipRight(payments(payment.id).Transition({ action: "pay", requestKey: "provider" }))
                )
            }
          }),
          Effect.catchAllCause((cause) => Effect.logWarning(`provider check of payment ${payment.id} failed`, cause))
        ), { concurrency: 8, discard: true })
    })
    while (true) {
      yield* pollOnce.pipe(Effect.catchAllCause((cause) => Effect.logWarning("provider poll failed", cause)))
      yield* Effect.sleep(PROVIDER_POLL_INTERVAL)
    }
  })
).pipe(
  Layer.provide(BakongProvider.DefaultWithoutDependencies),
  Layer.provide([BakongConfig.fromSettings, FetchHttpClient.layer]),
  Layer.provide(SettingsService.Default)
)

export const IdempotencyPurgeLive = ClusterCron.make({
  name: "payments/idempotency-purge",
  cron: Cron.unsafeParse("17 * * * *"),
  execute: Effect.flatMap(Idempotency, (idempotency) => idempotency.purgeExpired)
}).pipe(Layer.provide(Idempotency.Default))

export const PaymentJobsLive = Layer.mergeAll(ExpirySweeperLive, ProviderPollerLive, IdempotencyPurgeLive)
