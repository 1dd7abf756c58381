/**
 * The whole service on the suite's database (TestDatabase), started and stopped by the test itself, for
 * behaviour across a stop and a restart. Every start uses one master key, so a later start opens the
 * secrets an earlier one sealed.
 */
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Logger, LogLevel, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { ServiceLive } from "../../runtime/App.ts"
import { ChangeFeed } from "../../src/platform/ChangeFeed.ts"
import { WebhookDeliverySettings, type WebhookDeliverySettingsShape } from "../../src/webhooks/Dispatcher.ts"
import { clientAt } from "../support/Client.ts"
import type { TestAppShape } from "../support/TestApp.ts"
import { testConfigLayer } from "../support/TestConfig.ts"

/**
 * Runs `use` against a freshly started service delivering webhooks with `settings`; the service stops
 * when `use` returns. Call it again for a restart.
 */
export const restartableService = (settings: Partial<WebhookDeliverySettingsShape>) => {
  const masterKey = Option.some(Redacted.make(new Uint8Array(randomBytes(32))))
  const serviceLayer = ServiceLive.pipe(
    Layer.provideMerge(testConfigLayer({ webhookAllowPrivateNetworks: true, masterKey })),
    Layer.provide(WebhookDeliverySettings.layer(settings)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  )
  // `use` runs with the service's change feed, which writing to its outbox announces on.
  return <A, E>(use: (app: TestAppShape, sql: SqlClient.SqlClient) => Effect.Effect<A, E, ChangeFeed>) =>
    Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(serviceLayer)
      const server = Context.get(context, HttpServer.HttpServer)
      if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
      const baseUrl = `http://127.0.0.1:${server.address.port}`
      // A shape by hand (no database of its own, no mail): enough for the typed client and the fixtures.
      const app = {
        baseUrl,
        client: yield* clientAt(baseUrl),
        fetch: (path: string, init?: RequestInit) => fetch(new URL(path, baseUrl), init)
      } as unknown as TestAppShape
      return yield* use(app, Context.get(context, SqlClient.SqlClient)).pipe(Effect.provideService(ChangeFeed, Context.get(context, ChangeFeed)))
    }))
}
