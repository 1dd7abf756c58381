/**
 * The whole service, started in the test process on a free loopback port against the suite's own
 * database, with a typed HttpApiClient and a raw fetch for what the typed client cannot send
 * (malformed JSON, wrong methods, unknown paths).
 */
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { Context, Effect, Layer, Logger, LogLevel } from "effect"
import { SqlClient } from "@effect/sql"
import { type ApiClient, makeApiClient } from "../../domain/Client.ts"
import { ServiceLive } from "../../runtime/App.ts"
import { type AppConfigOverrides } from "../../src/platform/Config.ts"
import { decryptSecret, MasterKey } from "../../src/platform/Crypto.ts"
import { withRequestIds } from "../../src/platform/RequestLog.ts"
import { testConfigLayer } from "./TestConfig.ts"
import { TestDatabase } from "./TestDatabase.ts"

export interface TestAppShape {
  readonly baseUrl: string
  readonly client: ApiClient
  readonly fetch: (path: string, init?: RequestInit) => Promise<Response>
  readonly database: TestDatabase["Type"]
  /** The mail the service sent to `recipient`, oldest first, opened (it is stored sealed). */
  readonly mailTo: (recipient: string) => Promise<ReadonlyArray<SentMail>>
}

export interface SentMail {
  readonly subject: string
  readonly body: string
}

export class TestApp extends Context.Tag("test/TestApp")<TestApp, TestAppShape>() {}

const makeTestApp = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const database = yield* TestDatabase
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const baseUrl = `http://127.0.0.1:${server.address.port}`
  const client = yield* makeApiClient(baseUrl).pipe(Effect.provide(FetchHttpClient.layer))
  const sql = yield* SqlClient.SqlClient
  const { key } = yield* MasterKey
  const mailTo = (recipient: string) =>
    Effect.runPromise(Effect.gen(function*() {
      const rows = yield* sql<{ subject: string; body_sealed: string }>`
        SELECT subject, body_sealed FROM outgoing_mail WHERE recipient = ${recipient} AND body_sealed IS NOT NULL ORDER BY id`
      return yield* Effect.forEach(rows, (row) =>
        Effect.map(decryptSecret(key, row.body_sealed), (body): SentMail => ({ subject: row.subject, body })))
    }))
  return TestApp.of({
    baseUrl,
    client,
    fetch: (path, init) => fetch(new URL(path, baseUrl), init),
    database,
    mailTo
  })
})

/**
 * Collects every log line (logfmt, all levels) of a service, each with the id of the request it was logged
 * for as the process's own logger gives it, for tests that check what is logged; without one, only
 * warnings and errors reach the console.
 */
export const collectLogs = (sink: Array<string>) =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, withRequestIds(Logger.map(Logger.logfmtLogger, (line) => void sink.push(line)))),
    Logger.minimumLogLevel(LogLevel.All)
  )

/** The running service for one suite; torn down (server, cluster, database) when the suite ends. */
export const testAppLayer = (overrides: AppConfigOverrides = {}, options: { readonly logs?: Array<string> } = {}) =>
  Layer.effect(TestApp, makeTestApp).pipe(
    Layer.provideMerge(ServiceLive),
    Layer.provideMerge(testConfigLayer(overrides)),
    Layer.provideMerge(TestDatabase.layer),
    // Request lines would drown the test report; warnings and errors still show.
    Layer.provide(options.logs ? collectLogs(options.logs) : Logger.minimumLogLevel(LogLevel.Warning))
  )
