/**
 * The time rules of webhooks under TestClock, through WebhooksService and the dispatcher's queue queries
 * against the suite's database: after a secret rotation the old secret still signs for 24 hours and
 * not a millisecond longer, and a job waiting for its retry is due exactly when its wait is over. The
 * clock moves; nothing sleeps (and nothing is sent: the service's own dispatcher runs on the real clock,
 * for which these jobs lie years ahead).
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { SecretBox } from "../../src/platform/Crypto.ts"
import { newId } from "../../src/platform/Ids.ts"
import { WebhooksRepo } from "../../src/webhooks/Repo.ts"
import { SECRET_OVERLAP_MILLIS, WebhooksService } from "../../src/webhooks/Service.ts"
import { FUTURE_START, servicesOnTestApp, type StoreOwner, withNewStoreOwner } from "../support/Services.ts"

const RETRY_MILLIS = 5_000

describe("webhook time rules", () => {
  layer(servicesOnTestApp(), { timeout: 120_000, excludeTestServices: true })("with TestClock", (it) => {
    /** An endpoint of the owner's store, with one test event queued for it, made under the test clock. */
    const endpointWithQueuedEvent = ({ asOwner, store }: StoreOwner) =>
      Effect.gen(function*() {
        const webhooks = yield* WebhooksService
        const endpoint = yield* asOwner(webhooks.create({ store_id: store.id, url: "http://127.0.0.1:9/hooks", events: ["*"] }))
        yield* asOwner(webhooks.sendTest(endpoint.id))
        return endpoint
      })

    it.effect("after a rotation the old secret signs for 24 hours, then only the new one", () =>
      withNewStoreOwner((owner) =>
        Effect.gen(function*() {
          const webhooks = yield* WebhooksService
          const repo = yield* WebhooksRepo
          const box = yield* SecretBox
          const endpoint = yield* endpointWithQueuedEvent(owner)
          /** The secrets the next delivery is signed with, at the clock's now. */
          const signingSecrets = Effect.gen(function*() {
            const job = Option.getOrThrow(yield* repo.nextJob(endpoint.id, new Date(yield* TestClock.currentTimeMillis)))
            return yield* Effect.forEach(job.secrets_sealed, box.open)
          })
          expect(yield* signingSecrets).toEqual([endpoint.secret])

          yield* TestClock.adjust("2 hours")
          const rotatedAt = yield* TestClock.currentTimeMillis
          const rotated = yield* owner.asOwner(webhooks.rotateSecret(endpoint.id))
          expect(yield* signingSecrets).toEqual([rotated.secret, endpoint.secret])

          yield* TestClock.setTime(rotatedAt + SECRET_OVERLAP_MILLIS - 1)
          expect(yield* signingSecrets).toEqual([rotated.secret, endpoint.secret])
          yield* TestClock.setTime(rotatedAt + SECRET_OVERLAP_MILLIS)
          expect(yield* signingSecrets).toEqual([rotated.secret])

          // The next rotation starts a new window for the secret it replaces; the expired one is gone.
          const again = yield* owner.asOwner(webhooks.rotateSecret(endpoint.id))
          expect(yield* signingSecrets).toEqual([again.secret, rotated.secret])
        })))

    it.effect("a job waiting for its retry is due exactly when the wait is over", () =>
      withNewStoreOwner((owner) =>
        Effect.gen(function*() {
          const repo = yield* WebhooksRepo
          const endpoint = yield* endpointWithQueuedEvent(owner)
          const at = (millis: number) => new Date(millis)
          const isDue = (millis: number) =>
            Effect.gen(function*() {
              const job = Option.getOrThrow(yield* repo.nextJob(endpoint.id, at(millis)))
              const endpoints = yield* repo.dueEndpoints([], 100, at(millis))
              // The queue's two views agree.
              expect(endpoints.includes(endpoint.id)).toBe(job.due)
              return job.due
            })

          // Queued now, due now.
          expect(yield* isDue(FUTURE_START)).toBe(true)
          const job = Option.getOrThrow(yield* repo.nextJob(endpoint.id, at(FUTURE_START)))

          const settledAt = FUTURE_START + 1_000
          yield* repo.recordAttempt({
            deliveryId: newId("whd"),
            endpointId: endpoint.id,
            jobId: job.id,
            startedAt: at(FUTURE_START),
            settledAt: at(settledAt),
            statusCode: 503,
            durationMs: 1_000,
            error: "answered 503",
            outcome: { _tag: "RetryIn", millis: RETRY_MILLIS }
          })
          expect(yield* isDue(settledAt + RETRY_MILLIS - 1)).toBe(false)
          expect(yield* isDue(settledAt + RETRY_MILLIS)).toBe(true)
        })))
  })
})
