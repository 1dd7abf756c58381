/**
 * Batched webhook delivery: an endpoint's due jobs are read together, sent one after another and their
 * attempts recorded together. Order per endpoint still holds (a batch stops at its first failed attempt
 * and the jobs after it wait for that retry), a batch whose record is lost is sent again whole with the
 * same webhook-ids (at least once), a stop mid-batch records what was answered and sends the rest after
 * the restart, a slow endpoint gives its slot back when its turn is over, and an event is attempted as
 * soon as it commits, not at the next poll.
 */
import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { EventId } from "../../domain/Ids.ts"
import type { Store } from "../../domain/Stores.ts"
import type { WebhookEndpoint } from "../../domain/Webhooks.ts"
import { SecretBox } from "../../src/platform/Crypto.ts"
import { Outbox } from "../../src/platform/Outbox.ts"
import { newId } from "../../src/platform/Ids.ts"
import { currentDate } from "../../src/platform/Time.ts"
import { dispatchWebhooks, WebhookDeliverySettings, type WebhookDeliverySettingsShape } from "../../src/webhooks/Dispatcher.ts"
import { type AttemptOutcome, type AttemptRecord, WebhooksRepo } from "../../src/webhooks/Repo.ts"
import { WebhooksService } from "../../src/webhooks/Service.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs, listParams } from "../support/Client.ts"
import { paidPayment, storeWithKey } from "../support/Merchant.ts"
import { servicesOnTestApp, withNewStoreOwner } from "../support/Services.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"
import { TestDatabase } from "../support/TestDatabase.ts"
import { type Behaviour, type Receiver, type ReceivedRequest, TestReceiver } from "./Receiver.ts"
import { restartableService } from "./RestartableService.ts"

const RETRY_MS = 300

/** Short retries, small batches and turns (so a few events span several), a 50 ms poll. */
const batchedDelivery: Partial<WebhookDeliverySettingsShape> = {
  retrySchedule: [Duration.millis(RETRY_MS), Duration.millis(RETRY_MS), Duration.millis(RETRY_MS)],
  jitter: 0,
  requestTimeout: Duration.millis(1500),
  pollInterval: Duration.millis(50),
  batchSize: 10,
  jobsPerTurn: 25
}

const appWith = (settings: Partial<WebhookDeliverySettingsShape>) =>
  Layer.merge(
    testAppLayer({ webhookAllowPrivateNetworks: true }).pipe(Layer.provide(WebhookDeliverySettings.layer(settings))),
    TestReceiver.layer
  )

const webhookIdOf = (request: ReceivedRequest) => request.headers["webhook-id"] as string

/** A new owner's store with one endpoint (every event) on the receiver, answering as `behaviour` says. */
const endpointOn = (app: TestAppShape, receiver: Receiver, behaviour?: Behaviour) =>
  Effect.gen(function*() {
    const owner = yield* Effect.promise(() => signUp(app))
    const merchant = yield* storeWithKey(app, owner)
    const route = receiver.route(behaviour)
    const api = yield* clientAs(app, owner.token)
    const endpoint = yield* api.webhooks.create({ payload: { store_id: merchant.storeId, url: route.url, events: ["*"] } })
    return { owner, merchant, route, endpoint, api }
  })

/**
 * `count` payment events of the store, written by the outbox's own statement (which announces each) in one
 * transaction; answers their ids in outbox order.
 */
const commitEvents = (sql: SqlClient.SqlClient, storeId: Store["id"], count: number) =>
  Effect.gen(function*() {
    const outbox = yield* Outbox
    return yield* sql.withTransaction(Effect.gen(function*() {
      const ids: Array<EventId> = []
      for (let n = 1; n <= count; n++) {
        const object = { id: `pay_batch_${n}`, object: "payment", reference_id: `order-${n}` }
        ids.push(yield* outbox.emit({ storeId, livemode: false, type: "payment.completed", object }))
      }
      return ids
    }))
  }).pipe(Effect.provide(Outbox.Default), Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)

/** What a test of the running service works with. */
const suite = Effect.all({ app: TestApp, receiver: TestReceiver, sql: SqlClient.SqlClient })

type EndpointId = WebhookEndpoint["id"]

/** The endpoint's delivery records, oldest first, once there are at least `count`. */
const recordsOf = (app: TestAppShape, token: string, endpointId: EndpointId, count: number) =>
  Effect.gen(function*() {
    const api = yield* clientAs(app, token)
    const deadline = Date.now() + 15_000
    while (true) {
      const page = yield* api.webhooks.deliveries({ path: { id: endpointId }, urlParams: listParams({ limit: 100 }) })
      if (page.data.length >= count) return [...page.data].reverse()
      if (Date.now() > deadline) return yield* Effect.dieMessage(`expected ${count} delivery records, got ${page.data.length}`)
      yield* Effect.sleep("50 millis")
    }
  })

describe("Batched webhook delivery", () => {
  layer(appWith(batchedDelivery), { timeout: 120_000, excludeTestServices: true })("in batches", (it) => {
    it.effect("stops a batch at its first failed attempt: the jobs after it wait for its retry", () =>
      Effect.gen(function*() {
        const { app, receiver, sql } = yield* suite
        const { endpoint, merchant, owner, route } = yield* endpointOn(app, receiver, (n) => ({ status: n === 2 ? 500 : 200 }))
        const [e1, e2, e3, e4, e5] = yield* commitEvents(sql, merchant.storeId, 5)

        const requests = yield* receiver.waitFor(route.path, 6)
        expect(requests.map(webhookIdOf)).toEqual([e1, e2, e2, e3, e4, e5])
        // Nothing after the failed attempt went out before its retry was due.
        expect(requests[2]!.receivedAt - requests[1]!.receivedAt).toBeGreaterThanOrEqual(RETRY_MS - 50)
        expect(requests[3]!.receivedAt).toBeGreaterThanOrEqual(requests[2]!.receivedAt)

        const records = yield* recordsOf(app, owner.token, endpoint.id, 6)
        expect(records.map((d) => [d.event_id, d.attempt, d.status_code])).toEqual([
          [e1, 1, 200],
          [e2, 1, 500],
          [e2, 2, 200],
          [e3, 1, 200],
          [e4, 1, 200],
          [e5, 1, 200]
        ])
        yield* Effect.sleep(`${RETRY_MS * 2} millis`)
        expect(receiver.requests(route.path)).toHaveLength(6)
      }))

    it.effect("delivers a backlog of many batches to each endpoint in order, every event once, one record each", () =>
      Effect.gen(function*() {
        const { app, receiver, sql } = yield* suite
        const { endpoint, merchant, owner, route, api } = yield* endpointOn(app, receiver)
        const second = receiver.route()
        const other = yield* api.webhooks.create({ payload: { store_id: merchant.storeId, url: second.url, events: ["*"] } })
        const ids = yield* commitEvents(sql, merchant.storeId, 60)

        for (const [path, endpointId] of [[route.path, endpoint.id], [second.path, other.id]] as const) {
          const requests = yield* receiver.waitFor(path, ids.length)
          expect(requests.map(webhookIdOf)).toEqual(ids)
          const records = yield* recordsOf(app, owner.token, endpointId, ids.length)
          expect(records.map((d) => [d.event_id, d.attempt, d.status_code])).toEqual(ids.map((id) => [id, 1, 200]))
        }
        yield* Effect.sleep("300 millis")
        expect(receiver.requests(route.path)).toHaveLength(ids.length)
      }))

    it.effect("sends a batch whose attempts were not recorded again, whole and in order, with the same webhook-ids", () =>
      Effect.gen(function*() {
        const { app, receiver, sql } = yield* suite
        const { endpoint, merchant, owner, route } = yield* endpointOn(app, receiver)
        // As if the process died after its POSTs and before their record: recording this endpoint's
        // attempts fails until the trigger is dropped.
        yield* sql`
          CREATE FUNCTION lose_webhook_records() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN RAISE EXCEPTION 'the record of this batch is lost'; END $$`
        yield* sql.unsafe(`
          CREATE TRIGGER lose_webhook_records BEFORE INSERT ON webhook_deliveries FOR EACH ROW
          WHEN (NEW.endpoint_id = '${endpoint.id}') EXECUTE FUNCTION lose_webhook_records()`)
        const dropTrigger = Effect.zipRight(
          sql`DROP TRIGGER IF EXISTS lose_webhook_records ON webhook_deliveries`,
          sql`DROP FUNCTION IF EXISTS lose_webhook_records()`
        ).pipe(Effect.orDie)

        // Two passes at least, each lost; then the record works again.
        const ids = yield* Effect.gen(function*() {
          const ids = yield* commitEvents(sql, merchant.storeId, 3)
          yield* receiver.waitFor(route.path, ids.length * 2)
          return ids
        }).pipe(Effect.ensuring(dropTrigger))
        const records = yield* recordsOf(app, owner.token, endpoint.id, ids.length)
        yield* Effect.sleep("300 millis")

        // Every pass sent the whole batch again, in order: never a later event before an earlier one.
        const requests = receiver.requests(route.path)
        expect(requests.length % ids.length).toBe(0)
        expect(requests.map(webhookIdOf)).toEqual(requests.map((_, i) => ids[i % ids.length]))
        const webhook = new Webhook(endpoint.secret)
        for (const request of requests) {
          const first = requests.find((r) => webhookIdOf(r) === webhookIdOf(request))!
          expect(request.body).toBe(first.body)
          expect(webhook.verify(request.body, request.headers as Record<string, string>)).toMatchObject({ id: webhookIdOf(request) })
        }
        // Only the pass that was recorded left records: one per event.
        expect(records.map((d) => [d.event_id, d.attempt, d.status_code])).toEqual(ids.map((id) => [id, 1, 200]))
      }))
  })

  layer(
    appWith({ ...batchedDelivery, concurrency: 1, turnTime: Duration.millis(500), requestTimeout: Duration.seconds(5) }),
    { timeout: 120_000, excludeTestServices: true }
  )("with one slot", (it) => {
    it.effect("a slow endpoint gives its slot back when its turn is over, and another endpoint is served", () =>
      Effect.gen(function*() {
        const { app, receiver, sql } = yield* suite
        const slow = yield* endpointOn(app, receiver, () => ({ delayMs: 400 }))
        const fast = yield* endpointOn(app, receiver)
        yield* commitEvents(sql, slow.merchant.storeId, 20)
        yield* receiver.waitFor(slow.route.path, 1)
        const [fastEvent] = yield* commitEvents(sql, fast.merchant.storeId, 1)

        // Twenty slow answers take 8 s; the other endpoint does not wait for them.
        const [request] = yield* receiver.waitFor(fast.route.path, 1, 4_000)
        expect(webhookIdOf(request!)).toBe(fastEvent)
        expect(receiver.requests(slow.route.path).length).toBeLessThan(20)
      }))
  })

  layer(appWith({ ...batchedDelivery, pollInterval: Duration.minutes(10) }), { timeout: 120_000, excludeTestServices: true })(
    "with a ten-minute poll",
    (it) => {
      // Well under the poll interval: only the wake on commit explains an attempt this soon.
      const SOON_MS = 3_000

      it.effect("attempts an event as soon as it commits: outbox events, payments, test events and resends", () =>
        Effect.gen(function*() {
          const { app, receiver, sql } = yield* suite
          const { api, endpoint, merchant, route } = yield* endpointOn(app, receiver)
          // The dispatcher has started and looked once: what follows can only be picked up by a wake-up.
          yield* api.webhooks.sendTest({ path: { id: endpoint.id } })
          yield* receiver.waitFor(route.path, 1, 30_000)

          const afterCommit = <E, R>(count: number, commit: Effect.Effect<unknown, E, R>) =>
            Effect.gen(function*() {
              const before = receiver.requests(route.path).length
              yield* commit
              const committedAt = Date.now()
              const requests = yield* receiver.waitFor(route.path, before + count, SOON_MS)
              return requests.slice(before).map((request) => request.receivedAt - committedAt)
            })

          const outbox = yield* afterCommit(2, commitEvents(sql, merchant.storeId, 2))
          expect(Math.max(...outbox)).toBeLessThan(SOON_MS)
          // A payment's scan and payment, each an event committed by the payments engine.
          const payment = yield* afterCommit(2, paidPayment(app, merchant.key, { amount: "2.00" }))
          expect(Math.max(...payment)).toBeLessThan(SOON_MS)
          const test = yield* afterCommit(1, api.webhooks.sendTest({ path: { id: endpoint.id } }))
          expect(Math.max(...test)).toBeLessThan(SOON_MS)
          const [latest] = (yield* api.webhooks.deliveries({ path: { id: endpoint.id }, urlParams: listParams({ limit: 1 }) })).data
          const resend = yield* afterCommit(1, api.webhooks.resend({ path: { deliveryId: latest!.id } }))
          expect(Math.max(...resend)).toBeLessThan(SOON_MS)
        }))

      it.effect("looks for due endpoints only when a job may be due: events that queue no job cost no look", () =>
        Effect.gen(function*() {
          const { sql } = yield* suite
          const repo = yield* Effect.provide(WebhooksRepo, WebhooksRepo.Default)
          let looks = 0
          const counting = WebhooksRepo.make({
            ...repo,
            dueEndpoints: (...args) => Effect.zipRight(Effect.sync(() => looks++), repo.dueEndpoints(...args))
          })
          // A second dispatcher beside the service's, counting its looks; with no endpoint, nothing is sent.
          yield* dispatchWebhooks.pipe(
            Effect.provideService(WebhooksRepo, counting),
            Effect.provide(SecretBox.Default),
            Effect.scoped,
            Effect.forkScoped
          )
          const startedAt = Date.now()
          while (looks === 0 && Date.now() - startedAt < 10_000) yield* Effect.sleep("20 millis")
          expect(looks).toBe(1)
          // Twelve events of a store without endpoints, each committed (and announced) on its own.
          const storeId = `store_${newId("evt").slice(4)}` as Store["id"]
          for (let n = 0; n < 12; n++) yield* commitEvents(sql, storeId, 1)
          const undispatched = Effect.map(
            sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox WHERE store_id = ${storeId} AND dispatched_at IS NULL`,
            ([row]) => row!.n
          ).pipe(Effect.orDie)
          while ((yield* undispatched) > 0) yield* Effect.sleep("20 millis")
          // Every event woke both dispatchers; whichever took it queued no job, so no look followed.
          yield* Effect.sleep("200 millis")
          expect(looks).toBe(1)
        }).pipe(Effect.scoped))
    }
  )
})

describe("The delivery queue's batch statements", () => {
  layer(servicesOnTestApp(), { timeout: 120_000, excludeTestServices: true })("with TestClock", (it) => {
    it.effect("reads a batch in order and records it in one statement: attempts at one event count on", () =>
      withNewStoreOwner(({ asOwner, store }) =>
        Effect.gen(function*() {
          const webhooks = yield* WebhooksService
          const repo = yield* WebhooksRepo
          // Queued at the test clock's time, years ahead: the service's own dispatcher leaves them alone.
          const endpoint = yield* asOwner(webhooks.create({ store_id: store.id, url: "http://127.0.0.1:9/hooks", events: ["*"] }))
          const now = yield* currentDate
          const resent = EventId.make(newId("evt"))
          const later = EventId.make(newId("evt"))
          // One event queued twice (as a resend queues it again), then another.
          for (const eventId of [resent, resent, later]) {
            yield* repo.enqueue({ endpointId: endpoint.id, eventId, eventType: "test.event", body: `{"id":"${eventId}"}` }, now)
          }
          const jobs = yield* repo.pendingJobs(endpoint.id, now, 10)
          expect(jobs.map((job) => [job.event_id, job.due, job.url])).toEqual([
            [resent, true, "http://127.0.0.1:9/hooks"],
            [resent, true, "http://127.0.0.1:9/hooks"],
            [later, true, "http://127.0.0.1:9/hooks"]
          ])
          expect(jobs.every((job) => job.secrets_sealed.length === 1)).toBe(true)
          expect((yield* repo.pendingJobs(endpoint.id, now, 2)).map((job) => job.id)).toEqual(jobs.slice(0, 2).map((job) => job.id))

          // All three started within the same millisecond, as a fast receiver's answers do.
          const attempt = (jobId: string, statusCode: number, outcome: AttemptOutcome): AttemptRecord => ({
            deliveryId: newId("whd"),
            endpointId: endpoint.id,
            jobId,
            startedAt: now,
            settledAt: now,
            statusCode,
            durationMs: 0,
            error: statusCode === 200 ? null : `answered ${statusCode}`,
            outcome
          })
          yield* repo.recordAttempts([
            attempt(jobs[0]!.id, 200, { _tag: "Delivered" }),
            attempt(jobs[1]!.id, 200, { _tag: "Delivered" }),
            attempt(jobs[2]!.id, 503, { _tag: "RetryIn", millis: 5_000 })
          ])
          const records = [...(yield* repo.listDeliveries(endpoint.id, 10, undefined))].reverse()
          expect(records.map((d) => [d.event_id, d.attempt, d.status_code])).toEqual([
            [resent, 1, 200],
            [resent, 2, 200],
            [later, 1, 503]
          ])
          // Listed in the order they were made, each at least a millisecond after the one before.
          expect(records.map((d) => d.created_at.getTime() - now.getTime())).toEqual([0, 1, 2])

          // The delivered jobs are done; the failed one waits for its retry.
          const waiting = yield* repo.pendingJobs(endpoint.id, now, 10)
          expect(waiting.map((job) => [job.id, job.due, job.attempts])).toEqual([[jobs[2]!.id, false, 1]])
          const retryAt = new Date(now.getTime() + 5_000)
          expect((yield* repo.pendingJobs(endpoint.id, retryAt, 10)).map((job) => job.due)).toEqual([true])
        })))
  })
})

/** The service with batched delivery, stopped and started again on the same database. */
const withService = restartableService(batchedDelivery)

describe("Batched webhook delivery across a stop", () => {
  layer(Layer.merge(TestDatabase.layer, TestReceiver.layer), { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("records what was answered before the stop and sends the rest, the unanswered one again, after it", () =>
      Effect.gen(function*() {
        const receiver = yield* TestReceiver
        // The third request is never answered: the service stops while it is under way.
        const route = receiver.route((n) => (n === 3 ? { delayMs: 60_000 } : {}))

        const before = yield* withService((app, sql) =>
          Effect.gen(function*() {
            const owner = yield* Effect.promise(() => signUp(app))
            const api = yield* clientAs(app, owner.token)
            const store = yield* api.stores.create({ payload: { name: "Stop Store" } })
            const endpoint = yield* api.webhooks.create({ payload: { store_id: store.id, url: route.url, events: ["*"] } })
            const ids = yield* commitEvents(sql, store.id, 5)
            yield* receiver.waitFor(route.path, 3)
            return { owner, endpoint, ids }
          })
        )
        const [e1, e2, e3, e4, e5] = before.ids

        const records = yield* withService((app) =>
          Effect.zipRight(receiver.waitFor(route.path, 6), recordsOf(app, before.owner.token, before.endpoint.id, 5))
        )

        // e1 and e2 were answered and recorded before the stop: not sent again. e3 was under way: sent again.
        expect(receiver.requests(route.path).map(webhookIdOf)).toEqual([e1, e2, e3, e3, e4, e5])
        expect(records.map((d) => [d.event_id, d.attempt, d.status_code])).toEqual(
          [e1, e2, e3, e4, e5].map((id) => [id, 1, 200])
        )
      }))
  })
})
