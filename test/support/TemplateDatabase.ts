/**
 * The PostgreSQL database every suite's database is copied from (TestDatabase.ts), migrated to today's
 * schema once per change of the migrations (globalSetup) instead of once per suite. Plain `pg` here, and the
 * migrations loaded only when the template must be built, so the set-up before the suites stays light.
 */
import { createHash, randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

const serverUrl = (): string => process.env["TEST_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

export const databaseUrl = (name: string) => {
  const url = new URL(serverUrl())
  url.pathname = `/${name}`
  return url.toString()
}

/** Named by the migrations' own text, so an edited migration never hands a suite yesterday's schema. */
export const templateName = (() => {
  let name: string | undefined
  return () => {
    if (name !== undefined) return name
    const hash = createHash("sha256")
    const directory = join(ROOT, "migrations")
    for (const file of readdirSync(directory).sort()) hash.update(file).update(readFileSync(join(directory, file)))
    hash.update(readFileSync(join(ROOT, "runtime", "Migrations.ts")))
    name = `test_template_${hash.digest("hex").slice(0, 16)}`
    return name
  }
})()

/** `f` on a client of the server's maintenance database, closed afterwards. */
export const adminQuery = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: serverUrl(), connectionTimeoutMillis: 5_000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/**
 * Makes the migrated template unless it is there (before any suite runs). Built under a name of its own and
 * then renamed, so a run beside this one (another checkout's) never copies a half-migrated template.
 * Without a server (or with TEST_DATABASE=embedded) there is nothing to make.
 */
export const prepareTemplateDatabase = async (): Promise<void> => {
  if (process.env["TEST_DATABASE"] === "embedded") return
  const template = templateName()
  const exists = await adminQuery((client) => client.query("SELECT 1 FROM pg_database WHERE datname = $1", [template])).catch(() => undefined)
  if (exists === undefined || exists.rowCount !== 0) return
  const building = `test_building_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  await adminQuery((client) => client.query(`CREATE DATABASE ${building}`))
  try {
    const [{ Effect, Redacted }, { PgClient }, { runMigrations }] = await Promise.all([
      import("effect"),
      import("@effect/sql-pg"),
      import("../../runtime/Migrations.ts")
    ])
    await Effect.runPromise(
      runMigrations.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl(building)), maxConnections: 1 })))
    )
    await adminQuery((client) => client.query(`ALTER DATABASE ${building} RENAME TO ${template}`))
  } catch (error) {
    // Another run made it meanwhile (the rename found the name taken), or the migrations failed: then each
    // suite migrates its own database and says what failed.
    await adminQuery((client) => client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)).catch(() => undefined)
    if (!String(error).includes("already exists")) console.warn(`test databases: no migrated template (${String(error)})`)
  }
}
