/**
 * /ready tells the truth: 503 in the shared shape while the database refuses connections, 200 again
 * once it is back — without restarting the process.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted, Schedule } from "effect"
import pg from "pg"
import { TestApp, testAppLayer } from "../support/TestApp.ts"
import { postgresAvailable } from "../support/TestDatabase.ts"

const admin = (statement: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({
      connectionString: process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
    })
    await client.connect()
    try {
      await client.query(statement)
    } finally {
      await client.end()
    }
  })

const readyStatus = Effect.gen(function*() {
  const app = yield* TestApp
  return yield* Effect.promise(async () => {
    const response = await app.fetch("/ready")
    return { status: response.status, body: await response.json() as any }
  })
})

/** /ready's answer once it has the expected status (polled for up to 40 s). */
const readyWhen = (status: number) =>
  readyStatus.pipe(
    Effect.filterOrFail((result) => result.status === status),
    Effect.retry(Schedule.intersect(Schedule.spaced("250 millis"), Schedule.recurs(160)))
  )

describe.skipIf(!(await postgresAvailable()) || process.env["TEST_DATABASE"] === "embedded")("readiness", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("against PostgreSQL", (it) => {
    it.effect("answers 503 while the database is unusable and 200 once it is back", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const url = new URL(Redacted.value(Option.getOrThrow(app.database.url)))
        const name = url.pathname.slice(1)
        expect((yield* readyStatus).status).toBe(200)

        yield* admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
        yield* admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`)
        const down = yield* readyWhen(503)
        expect(down.status).toBe(503)
        expect(down.body.error.code).toBe("service_unavailable")
        expect(down.body.error.message).toContain("database")

        yield* admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
        const up = yield* readyWhen(200)
        expect(up.status).toBe(200)
        expect(up.body.checks).toEqual({ database: "ok", cluster: "ok" })
      }), 90_000)
  })
})
