/**
 * `npx khqr …`: the service from a terminal, through the same typed clients a merchant's code uses
 * (domain/Client.ts, domain/ConsoleClient.ts).
 *
 *   khqr login --base-url http://localhost:3000 --email owner@example.com --password …
 *   khqr keys create --store str_… [--mode test|live]
 *   khqr keys list --store str_…
 *   khqr trigger --endpoint we_…            a test event to a webhook endpoint
 *   khqr tail --store str_… [--live]         payments of the store as they change
 *   khqr listen --store str_… --forward-to http://localhost:4242/webhooks [--live]
 *                                            the store's events, signed as webhooks, to a local URL
 *
 * `login` keeps the service's base URL and the session token in `$KHQR_CONFIG_DIR/config.json`
 * (default `~/.config/khqr`, mode 0600); the other commands use them.
 */
import { Command, Options } from "@effect/cli"
import { FetchHttpClient } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Redacted, Schema, Stream } from "effect"
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { makeApiClient } from "../domain/Client.ts"
import { makeConsoleClient } from "../domain/ConsoleClient.ts"
import { EventId, StoreId, WebhookEndpointId } from "../domain/Ids.ts"
import type { WebhookEvent } from "../domain/Webhooks.ts"
import { newSigningSecret, webhookHeaders } from "../src/webhooks/Signing.ts"

const Session = Schema.Struct({ base_url: Schema.String, token: Schema.String })
type Session = typeof Session.Type

const configDirectory = Config.string("KHQR_CONFIG_DIR").pipe(Config.withDefault(join(homedir(), ".config", "khqr")))

const saveSession = (session: Session) =>
  Effect.flatMap(configDirectory, (directory) =>
    Effect.sync(() => {
      mkdirSync(directory, { recursive: true, mode: 0o700 })
      const file = join(directory, "config.json")
      writeFileSync(file, JSON.stringify(session, null, 2) + "\n", { mode: 0o600 })
      chmodSync(file, 0o600)
      return file
    }))

const loadSession = Effect.flatMap(configDirectory, (directory) =>
  Effect.try({
    try: () => Schema.decodeUnknownSync(Session)(JSON.parse(readFileSync(join(directory, "config.json"), "utf8"))),
    catch: () => new Error("not logged in: run `khqr login` first")
  }))

const consoleApi = Effect.flatMap(loadSession, (session) =>
  Effect.map(makeApiClient(session.base_url, { credential: session.token }), (api) => ({ api, session })))

const store = Options.text("store").pipe(Options.withDescription("The store (str_…)"), Options.withSchema(StoreId))

const login = Command.make(
  "login",
  {
    baseUrl: Options.text("base-url").pipe(Options.withDefault("http://localhost:3000")),
    email: Options.text("email"),
    password: Options.redacted("password")
  },
  ({ baseUrl, email, password }) =>
    Effect.gen(function*() {
      const visitor = yield* makeApiClient(baseUrl)
      const grant = yield* visitor.auth.login({ payload: { email, password: Redacted.value(password) } })
      const file = yield* saveSession({ base_url: baseUrl, token: grant.access_token })
      yield* Console.log(`logged in as ${grant.user.email}; session kept in ${file}`)
    })
).pipe(Command.withDescription("Log in and keep the session for the other commands"))

const keysCreate = Command.make(
  "create",
  { store, mode: Options.choice("mode", ["test", "live"]).pipe(Options.withDefault("test" as const)) },
  ({ mode, store }) =>
    Effect.gen(function*() {
      const { api } = yield* consoleApi
      const key = yield* api.apiKeys.create({ payload: { store_id: store, mode } })
      yield* Console.log(`${key.id} ${key.mode} ${key.secret}`)
      yield* Console.log("The secret is shown only now: keep it in your backend's secrets.")
    })
)

const keysList = Command.make("list", { store }, ({ store }) =>
  Effect.gen(function*() {
    const { api } = yield* consoleApi
    const page = yield* api.apiKeys.list({ urlParams: { store_id: store, limit: 100 } })
    for (const key of page.data) {
      yield* Console.log(`${key.id} ${key.mode} …${key.last4} ${key.revoked_at === null ? "active" : "revoked"}`)
    }
  }))

const keys = Command.make("keys").pipe(
  Command.withSubcommands([keysCreate, keysList]),
  Command.withDescription("Create and list a store's API keys")
)

const trigger = Command.make(
  "trigger",
  { endpoint: Options.text("endpoint").pipe(Options.withSchema(WebhookEndpointId)) },
  ({ endpoint }) =>
    Effect.gen(function*() {
      const { api } = yield* consoleApi
      const delivery = yield* api.webhooks.sendTest({ path: { id: endpoint } })
      yield* Console.log(JSON.stringify(delivery))
    })
).pipe(Command.withDescription("Send a test event to a webhook endpoint"))

const tail = Command.make("tail", { store, live: Options.boolean("live") }, ({ live, store }) =>
  Effect.gen(function*() {
    const session = yield* loadSession
    const client = yield* makeConsoleClient({ baseUrl: session.base_url, sessionToken: session.token })
    // The feed ends after a while by design; follow it again, for as long as the command runs.
    yield* Stream.runForEach(client.PaymentFeed({ store_id: store, livemode: live }), (frame) =>
      frame._tag === "PaymentChanged"
        ? Console.log(`${frame.id} ${frame.status} ${frame.amount} ${frame.currency}`)
        : Console.log(`following ${store} (${live ? "live" : "test"} payments)`)).pipe(Effect.forever)
  }).pipe(Effect.scoped)).pipe(Command.withDescription("Print the store's payments as they change"))

/** One event to the local URL, signed under the session's secret; answers the line that says how it went. */
const forward = (url: string, secret: string, event: WebhookEvent) =>
  Effect.promise(async () => {
    const body = JSON.stringify(event)
    const headers = webhookHeaders([secret], event.id, Math.floor(Date.now() / 1000), body)
    const started = Date.now()
    try {
      const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(30_000) })
      await response.arrayBuffer()
      return `<-- [${response.status}] POST ${url} [${event.id}] ${Date.now() - started} ms`
    } catch (error) {
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)
      return `<-- [ERR] POST ${url} [${event.id}] ${reason}`
    }
  })

const listen = Command.make(
  "listen",
  {
    store,
    forwardTo: Options.text("forward-to").pipe(
      Options.withDescription("The local URL each event is POSTed to, e.g. http://localhost:4242/webhooks")
    ),
    live: Options.boolean("live").pipe(Options.withDescription("Live-mode events instead of test-mode ones"))
  },
  ({ forwardTo, live, store }) =>
    Effect.gen(function*() {
      const target = yield* Effect.try({
        try: () => new URL(forwardTo).toString(),
        catch: () => new Error(`--forward-to must be a URL such as http://localhost:4242/webhooks, not ${forwardTo}`)
      })
      const session = yield* loadSession
      const client = yield* makeConsoleClient({ baseUrl: session.base_url, sessionToken: session.token })
      // A secret of this run only, as `stripe listen` makes: the receiver verifies with it while developing.
      const secret = newSigningSecret()
      yield* Console.log(`Ready! Your webhook signing secret is ${secret} (^C to quit)`)
      let after: EventId | undefined = undefined
      let announced = false
      const followOnce = () => Stream.runForEach(
        client.EventFeed({ store_id: store, livemode: live, ...(after === undefined ? {} : { after }) }),
        (frame) =>
          Effect.gen(function*() {
            if (frame._tag === "EventFeedSynced") {
              if (after === undefined) after = frame.last_event_id ?? undefined
              if (!announced) yield* Console.log(`forwarding ${live ? "live" : "test"} events of ${store} to ${target}`)
              announced = true
              return
            }
            after = frame.event.id
            yield* Console.log(`--> ${frame.event.type} [${frame.event.id}]`)
            yield* Console.log(yield* forward(target, secret, frame.event))
          })
      )
      // The feed ends after a while by design; follow it again from the last event, for as long as the command runs.
      yield* Effect.suspend(followOnce).pipe(Effect.forever)
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Forward the store's events, signed as webhooks with a secret of this session, to a local URL"))

const khqr = Command.make("khqr").pipe(
  Command.withSubcommands([login, keys, trigger, tail, listen]),
  Command.withDescription("The merchant platform from a terminal")
)

const run = Command.run(khqr, { name: "khqr", version: JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version })

run(process.argv).pipe(
  Effect.provide(Layer.merge(NodeContext.layer, FetchHttpClient.layer)),
  NodeRuntime.runMain
)
