/**
 * Delivery survives a restart: the service is stopped with an event still waiting for a retry and
 * another still in the outbox, then started again on the same database. Both are delivered, the first
 * with the same `webhook-id` as before, signed with the same secret.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { Webhook } from "standardwebhooks"
import { newId } from "../../src/platform/Ids.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs, listParams } from "../support/Client.ts"
import { TestDatabase } from "../support/TestDatabase.ts"
import { TestReceiver } from "./Receiver.ts"
import { restartableService } from "./RestartableService.ts"

/** The service, stopped and started again on the same database. */
const withService = restartableService({
  retrySchedule: [Duration.millis(200), Duration.millis(200), Duration.millis(200), Duration.millis(200)],
  jitter: 0,
  pollInterval: Duration.millis(50)
})

describe("Webhook delivery across a restart", () => {
  layer(Layer.merge(TestDatabase.layer, TestReceiver.layer), { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("delivers what was waiting and what was still in the outbox, with the same webhook-id", () =>
      Effect.gen(function*() {
        const receiver = yield* TestReceiver
        let receiverUp = false
        const route = receiver.route(() => ({ status: receiverUp ? 200 : 503 }))
        const outboxEventId = newId("evt")

        const before = yield* withService((app, sql) =>
          Effect.gen(function*() {
            const owner = yield* Effect.promise(() => signUp(app))
            const api = yield* clientAs(app, owner.token)
            const store = yield* api.stores.create({ payload: { name: "Restart Store" } })
            const endpoint = yield* api.webhooks.create({ payload: { store_id: store.id, url: route.url, events: ["*"] } })
            const event = yield* api.webhooks.sendTest({ path: { id: endpoint.id } })
            yield* receiver.waitFor(route.path, 1)
            // Committed just before the stop, as a payment's change would be: the dispatcher may or may
            // not have seen it.
            const payload = {
              id: outboxEventId,
              object: "event",
              type: "payment.completed",
              created_at: new Date().toISOString(),
              livemode: false,
              data: { object: { id: "pay_restart", object: "payment", reference_id: "order-restart" } }
            }
            yield* sql`
              INSERT INTO outbox (event_id, store_id, livemode, type, payload)
              VALUES (${outboxEventId}, ${store.id}, false, 'payment.completed', ${JSON.stringify(payload)}::jsonb)`
            return { owner, endpoint, event }
          })
        )

        receiverUp = true
        const delivered = yield* withService((app) =>
          Effect.gen(function*() {
            const deadline = Date.now() + 15_000
            while (true) {
              const ids = new Set(receiver.requests(route.path).map((r) => r.headers["webhook-id"]))
              if (ids.has(before.event.id) && ids.has(outboxEventId)) break
              if (Date.now() > deadline) return yield* Effect.dieMessage("events were not delivered after the restart")
              yield* Effect.sleep("50 millis")
            }
            const api = yield* clientAs(app, before.owner.token)
            const list = yield* api.webhooks.deliveries({ path: { id: before.endpoint.id }, urlParams: listParams({ limit: 100 }) })
            return list.data
          })
        )

        const requests = receiver.requests(route.path)
        const lastTest = requests.filter((r) => r.headers["webhook-id"] === before.event.id).at(-1)!
        const outboxEvent = requests.find((r) => r.headers["webhook-id"] === outboxEventId)!
        const webhook = new Webhook(before.endpoint.secret)
        expect(webhook.verify(lastTest.body, lastTest.headers as Record<string, string>)).toMatchObject({ type: "test.event" })
        expect(webhook.verify(outboxEvent.body, outboxEvent.headers as Record<string, string>)).toMatchObject({
          type: "payment.completed",
          data: { object: { reference_id: "order-restart" } }
        })
        const succeeded = delivered.filter((d) => d.status_code === 200).map((d) => d.event_id)
        expect(succeeded.sort()).toEqual([before.event.id, outboxEventId].sort())
      }))
  })
})
