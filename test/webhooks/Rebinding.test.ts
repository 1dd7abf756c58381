/**
 * DNS rebinding: a delivery connects to the address its destination check approved, never to what a
 * second resolution of the host would answer. The service's resolver is a stub that answers 127.0.0.2
 * for `localhost`; the system's resolver answers 127.0.0.1. A receiver listens on each, on the same port:
 * only the checked one may be reached, and it sees the URL's own host in `Host`.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { WebhookResolver } from "../../src/webhooks/Destination.ts"
import { WebhookDeliverySettings } from "../../src/webhooks/Dispatcher.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const CHECKED_ADDRESS = "127.0.0.2"
const resolverCalls: Array<string> = []

const stubResolver = WebhookResolver.layer(async (hostname) => {
  resolverCalls.push(hostname)
  if (hostname !== "localhost") throw new Error(`ENOTFOUND ${hostname}`)
  return [CHECKED_ADDRESS]
})

const fastDelivery = WebhookDeliverySettings.layer({
  retrySchedule: [Duration.millis(200)],
  jitter: 0,
  requestTimeout: Duration.seconds(2),
  pollInterval: Duration.millis(50)
})

interface Listener {
  readonly server: Server
  readonly received: Array<IncomingHttpHeaders>
}

const listen = (host: string, port: number) =>
  Effect.async<Listener, Error>((resume) => {
    const received: Array<IncomingHttpHeaders> = []
    const server = createServer((request, response) => {
      received.push(request.headers)
      request.resume()
      request.on("end", () => response.end("ok"))
    })
    server.once("error", (error) => resume(Effect.fail(error)))
    server.listen(port, host, () => resume(Effect.succeed({ server, received })))
  })

const close = (listener: Listener) =>
  Effect.promise(() =>
    new Promise<void>((done) => {
      listener.server.closeAllConnections()
      listener.server.close(() => done())
    })
  )

/** The checked receiver on 127.0.0.2 and a rebound one on 127.0.0.1, on one port. */
const receivers = Effect.acquireRelease(
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 20; attempt++) {
      const checked = yield* listen(CHECKED_ADDRESS, 0)
      const port = (checked.server.address() as AddressInfo).port
      const rebound = yield* listen("127.0.0.1", port).pipe(Effect.option)
      if (rebound._tag === "Some") return { port, checked, rebound: rebound.value }
      yield* close(checked)
    }
    return yield* Effect.dieMessage("no port free on both loopback addresses")
  }),
  ({ checked, rebound }) => Effect.zip(close(checked), close(rebound))
)

describe("webhook DNS rebinding", () => {
  layer(
    testAppLayer({ webhookAllowPrivateNetworks: true }).pipe(Layer.provide(Layer.merge(fastDelivery, stubResolver))),
    { timeout: 60_000, excludeTestServices: true }
  )("deliveries", (it) => {
    it.scoped("connect to the checked address, with the URL's host in Host", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const { checked, port, rebound } = yield* receivers
        const owner = yield* Effect.promise(() => signUp(app))
        const api = yield* clientAs(app, owner.token)
        const store = yield* api.stores.create({ payload: { name: "Rebinding Store" } })
        const endpoint = yield* api.webhooks.create({
          payload: { store_id: store.id, url: `http://localhost:${port}/hook`, events: ["*"] }
        })
        resolverCalls.length = 0
        const sent = yield* api.webhooks.sendTest({ path: { id: endpoint.id } })

        const deadline = Date.now() + 10_000
        while (checked.received.length === 0 && rebound.received.length === 0 && Date.now() < deadline) {
          yield* Effect.sleep("50 millis")
        }
        expect(rebound.received, "a second resolution reached 127.0.0.1").toHaveLength(0)
        expect(checked.received).toHaveLength(1)
        expect(checked.received[0]!.host).toBe(`localhost:${port}`)
        expect(checked.received[0]!["webhook-id"]).toBe(sent.id)
        // The delivery asked the (stub) resolver, and only it.
        expect(resolverCalls).toContain("localhost")
      }))
  })
})
