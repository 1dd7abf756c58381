/**
 * The `khqr` command (bin/khqr.mjs) as a developer runs it, against the running service: log in (the
 * session kept 0600), create and list API keys, send a test event to a webhook endpoint, and tail the
 * store's payments live while one is created and paid.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile, spawn } from "node:child_process"
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
  })
})
