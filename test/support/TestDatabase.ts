/**
 * A fresh database for one test suite: created on the PostgreSQL at TEST_DATABASE_URL (default: the
 * local server) and dropped afterwards, or — when no server answers — the embedded database in a
 * temporary directory, so the tests run on a laptop without PostgreSQL too.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { adminQuery, databaseUrl, templateName } from "./TemplateDatabase.ts"

export interface TestDatabaseShape {
  /** The database to use; None means "the embedded database under `dataDir`". */
  readonly url: Option.Option<Redacted.Redacted<string>>
  /** A private directory for the suite's DATA_DIR. */
  readonly dataDir: string
  readonly kind: "postgres" | "embedded"
}

export class TestDatabase extends Context.Tag("test/TestDatabase")<TestDatabase, TestDatabaseShape>() {
  static readonly layer = Layer.scoped(TestDatabase, Effect.suspend(() => acquire))
}

const withAdminClient = <A>(f: (client: pg.Client) => Promise<A>) => Effect.tryPromise(() => adminQuery(f))

/** Whether a PostgreSQL server answers at TEST_DATABASE_URL; asked once per test process (its files share the answer). */
let serverAvailable: Promise<boolean> | undefined
export const postgresAvailable = (): Promise<boolean> => {
  serverAvailable ??= Effect.runPromise(
    withAdminClient((client) => client.query("SELECT 1")).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
  )
  return serverAvailable
}

/** `CREATE DATABASE` copying the migrated template, or an empty database when there is none. */
const createDatabase = (name: string) =>
  withAdminClient(async (client) => {
    const template = templateName()
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [template])
    await client.query(exists.rowCount === 0 ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`)
  })

const acquire = Effect.gen(function*() {
  const dataDir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "merchant-test-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const forceEmbedded = process.env["TEST_DATABASE"] === "embedded"
  if (forceEmbedded || !(yield* Effect.promise(postgresAvailable))) {
    return { url: Option.none(), dataDir, kind: "embedded" as const }
  }
  const name = `test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  yield* Effect.acquireRelease(
    createDatabase(name).pipe(Effect.orDie),
    () => withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).pipe(Effect.ignore)
  )
  return { url: Option.some(Redacted.make(databaseUrl(name))), dataDir, kind: "postgres" as const }
})
