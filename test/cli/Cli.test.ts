/**
 * The `khqr` command (bin/khqr.mjs) as a developer runs it, against the running service: log in (the
 * session kept 0600), create and list API keys, send a test event to a webhook endpoint, tail the
 * store's payments live while one is created and paid, and `listen --forward-to` a local receiver that
 * verifies each event with the secret the command printed (standardwebhooks), its answers printed back.
 */
import { describe, expect, layer } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { Chunk, Effect, Stream } from "effect"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { EventId } from "../../domain/Ids.ts"
import { execFile, spawn } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { signUp } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { createPayment, simulate, storeWithKey } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const root = resolve(import.meta.dirname, "..", "..")
const run = promisify(execFile)

interface Received {
  readonly headers: Record<string, string>
  readonly body: string
}

/** A developer's local webhook receiver: records each request; answers 500 to the types in `failFor`. */
const startReceiver = (failFor: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly url: string; readonly received: Array<Received>; readonly close: () => void }>((ready) => {
        const received: Array<Received> = []
        const server = createServer((request, response) => {
          let body = ""
          request.on("data", (chunk) => body += chunk)
          request.on("end", () => {
            received.push({ headers: request.headers as Record<string, string>, body })
            const type = (JSON.parse(body) as { type: string }).type
            response.writeHead(failFor.includes(type) ? 500 : 200).end()
          })
        })
        server.listen(0, "127.0.0.1", () =>
          ready({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received, close: () => server.close() }))
      })
    ),
    (receiver) => Effect.sync(receiver.close)
  )

describe("the khqr command", () => {
  layer(testAppLayer(), { timeout: 180_000, excludeTestServices: true })("against the running service", (it) => {
    it.effect("logs in, creates and lists keys, triggers a test event and tails payments", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const configDir = mkdtempSync(join(tmpdir(), "khqr-cli-"))
        const env = { ...process.env, KHQR_CONFIG_DIR: configDir, NO_COLOR: "1" }
        const khqr = (...args: Array<string>) =>
          Effect.promise(() => run(process.execPath, [join(root, "bin", "khqr.mjs"), ...args], { cwd: root, env }).then((r) => r.stdout))
        try {
          const owner = yield* Effect.promise(() => signUp(app))
          const merchant = yield* storeWithKey(app, owner)

          expect(yield* khqr("login", "--base-url", app.baseUrl, "--email", owner.email, "--password", owner.password))
            .toContain(`logged in as ${owner.email}`)
          expect(statSync(join(configDir, "config.json")).mode & 0o777).toBe(0o600)

          const created = yield* khqr("keys", "create", "--store", merchant.storeId)
          expect(created).toMatch(/^key_\w+ test sk_test_\w+/)
          const listed = yield* khqr("keys", "list", "--store", merchant.storeId)
          expect(listed.trim().split("\n")).toHaveLength(2)
          expect(listed).toContain(created.split(" ")[0]!)

          const endpoint = yield* (yield* clientAs(app, owner.token)).webhooks.create({
            payload: { store_id: merchant.storeId, url: "http://127.0.0.1:9/hooks", events: ["payment.completed"] }
          })
          const triggered = JSON.parse(yield* khqr("trigger", "--endpoint", endpoint.id))
          expect(triggered).toMatchObject({ object: "event", type: "test.event", data: { object: { endpoint_id: endpoint.id } } })

          let output = ""
          const tail = spawn(process.execPath, [join(root, "bin", "khqr.mjs"), "tail", "--store", merchant.storeId], { cwd: root, env })
          tail.stdout.on("data", (chunk) => output += chunk)
          tail.stderr.on("data", (chunk) => output += chunk)
          try {
            const waitFor = (pattern: RegExp) =>
              Effect.gen(function*() {
                const deadline = Date.now() + 30_000
                while (!pattern.test(output) && Date.now() < deadline) yield* Effect.sleep("100 millis")
                expect(output).toMatch(pattern)
              })
            yield* waitFor(/following str_\w+ \(test payments\)/)
            const payment = yield* createPayment(app, merchant.key)
            yield* simulate(app, merchant.key, payment.id, "scanned")
            yield* simulate(app, merchant.key, payment.id, "paid")
            yield* waitFor(new RegExp(`${payment.id} paid 12.50 USD`))
          } finally {
            tail.kill("SIGTERM")
          }
        } finally {
          rmSync(configDir, { recursive: true, force: true })
        }
      }))

    it.scoped("listen forwards the store's events to a local URL, signed with the secret it printed", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const configDir = mkdtempSync(join(tmpdir(), "khqr-listen-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(configDir, { recursive: true, force: true })))
        const env = { ...process.env, KHQR_CONFIG_DIR: configDir, NO_COLOR: "1" }
        const owner = yield* Effect.promise(() => signUp(app))
        const merchant = yield* storeWithKey(app, owner)
        yield* Effect.promise(() =>
          run(process.execPath, [join(root, "bin", "khqr.mjs"), "login", "--base-url", app.baseUrl, "--email", owner.email, "--password", owner.password], {
            cwd: root,
            env
          }))
        const receiver = yield* startReceiver(["payment.completed"])

        let output = ""
        const listen = spawn(process.execPath, [join(root, "bin", "khqr.mjs"), "listen", "--store", merchant.storeId, "--forward-to", receiver.url], {
          cwd: root,
          env
        })
        listen.stdout.on("data", (chunk) => output += chunk)
        listen.stderr.on("data", (chunk) => output += chunk)
        yield* Effect.addFinalizer(() => Effect.sync(() => listen.kill("SIGTERM")))
        const waitFor = (pattern: RegExp) =>
          Effect.gen(function*() {
            const deadline = Date.now() + 30_000
            while (!pattern.test(output) && Date.now() < deadline) yield* Effect.sleep("100 millis")
            expect(output).toMatch(pattern)
            return pattern.exec(output)!
          })
        const secret = (yield* waitFor(/Your webhook signing secret is (whsec_[A-Za-z0-9+/=]+)/))[1]!
        yield* waitFor(new RegExp(`forwarding test events of ${merchant.storeId} to ${receiver.url.replace(/[/.]/g, "\\$&")}`))

        const payment = yield* createPayment(app, merchant.key)
        yield* simulate(app, merchant.key, payment.id, "scanned")
        yield* simulate(app, merchant.key, payment.id, "paid")
        yield* waitFor(/--> payment\.completed \[(evt_\w+)\]\n<-- \[500\] POST /)
        yield* waitFor(/--> payment\.scanned \[evt_\w+\]\n<-- \[200\] POST /)

        // Every delivery verifies under the printed secret, as a receiver using standardwebhooks checks it.
        const verifier = new Webhook(secret)
        const types = receiver.received.map((delivery) => (verifier.verify(delivery.body, delivery.headers) as { type: string }).type)
        expect(types).toContain("payment.scanned")
        expect(types).toContain("payment.completed")
        for (const delivery of receiver.received) {
          const event = JSON.parse(delivery.body) as { id: string; livemode: boolean; data: { object: { id?: string } } }
          expect(delivery.headers["webhook-id"]).toBe(event.id)
          expect(event.livemode).toBe(false)
        }
        expect(() => new Webhook(Buffer.from("another secret").toString("base64")).verify(receiver.received[0]!.body, receiver.received[0]!.headers))
          .toThrow()

        // Subscribing again `after` an event gets what followed it first, so a client that reconnects misses nothing.
        const scanned = EventId.make(/--> payment\.scanned \[(evt_\w+)\]/.exec(output)![1]!)
        const feedOf = (token: string) =>
          Effect.flatMap(makeConsoleClient({ baseUrl: app.baseUrl, sessionToken: token }), (client) =>
            Stream.runCollect(Stream.take(client.EventFeed({ store_id: merchant.storeId, after: scanned }), 2))).pipe(
              Effect.provide(FetchHttpClient.layer)
            )
        const frames = Chunk.toArray(yield* feedOf(owner.token))
        expect(frames[0]?._tag).toBe("EventFeedSynced")
        expect(frames[1]?._tag === "EventOccurred" && frames[1].event.type).toBe("payment.completed")
        // Another tenant's store is not found.
        const stranger = yield* Effect.promise(() => signUp(app))
        expect(yield* Effect.flip(feedOf(stranger.token))).toMatchObject({ _tag: "NotFound" })
      }))
  })
})
