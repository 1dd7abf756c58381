/**
 * One process per data directory. The embedded database's files, and the server process serving them,
 * belong to exactly one service process at a time: a second `npm start` on the same DATA_DIR would
 * otherwise run its own migrations, cluster and expiry sweeper against the same data, or — worse — treat
 * the first one's database server as an orphan to stop.
 *
 * The lock is a file, `DATA_DIR/service.lock`, created exclusively and holding the owner's pid and the
 * start time of that pid. It is removed on exit; after a crash the next process finds its holder gone
 * (no such pid, or a pid reused by a process that started later) and takes it over. Taking over goes
 * through a second exclusive file, so two processes starting at once after a crash cannot both win.
 */
import { Effect } from "effect"
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { ConfigurationError } from "../src/platform/Config.ts"

const LOCK_FILE = "service.lock"
const TAKEOVER_FILE = "service.lock.takeover"
/** A take-over file older than this was left by a process that crashed in the middle of taking over. */
const TAKEOVER_STALE_MS = 10_000

interface Holder {
  readonly pid: number
  /** The holder's start time as the kernel reports it, where it does (Linux); guards against pid reuse. */
  readonly startTime: string | null
}

/** The kernel's start time of `pid` (field 22 of /proc/PID/stat), or null where there is no /proc. */
const processStartTime = (pid: number): string | null => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name (field 2) is in parentheses and may contain spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return fields[19] ?? null
  } catch {
    return null
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const holds = (holder: Holder): boolean =>
  holder.pid !== process.pid && isAlive(holder.pid) &&
  (holder.startTime === null || processStartTime(holder.pid) === null || processStartTime(holder.pid) === holder.startTime)

const readHolder = (path: string): Holder | undefined => {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<Holder>
    return typeof parsed.pid === "number" ? { pid: parsed.pid, startTime: parsed.startTime ?? null } : { pid: -1, startTime: null }
  } catch (error) {
    // Missing: nobody holds it. Unreadable or half-written: a holder that died while writing it.
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? undefined : { pid: -1, startTime: null }
  }
}

const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code

const tryCreate = (path: string, content: string): boolean => {
  try {
    writeFileSync(path, content, { flag: "wx", mode: 0o600 })
    return true
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return false
    throw error
  }
}

const inUse = (directory: string, holder: Holder) =>
  new ConfigurationError(
    `Data directory ${directory} is in use by another process (pid ${holder.pid}); stop it or set DATA_DIR to another directory`
  )

/** Takes the lock, or fails with one line naming the directory and the holder's pid. */
const acquire = (directory: string) =>
  Effect.gen(function*() {
    mkdirSync(directory, { recursive: true })
    const lockPath = join(directory, LOCK_FILE)
    const takeoverPath = join(directory, TAKEOVER_FILE)
    const mine = JSON.stringify({ pid: process.pid, startTime: processStartTime(process.pid) } satisfies Holder) + "\n"
    for (let attempt = 0; attempt < 100; attempt++) {
      if (tryCreate(lockPath, mine)) return lockPath
      const holder = readHolder(lockPath)
      if (holder === undefined) continue
      if (holds(holder)) return yield* Effect.fail(inUse(directory, holder))
      // The holder is gone: take over, one process at a time.
      if (!tryCreate(takeoverPath, mine)) {
        try {
          if (Date.now() - statSync(takeoverPath).mtimeMs > TAKEOVER_STALE_MS) rmSync(takeoverPath, { force: true })
        } catch {
          // removed meanwhile by the process that took over
        }
        yield* Effect.sleep("50 millis")
        continue
      }
      try {
        const current = readHolder(lockPath)
        if (current !== undefined && holds(current)) return yield* Effect.fail(inUse(directory, current))
        rmSync(lockPath, { force: true })
        if (tryCreate(lockPath, mine)) return lockPath
      } finally {
        rmSync(takeoverPath, { force: true })
      }
    }
    return yield* Effect.fail(new ConfigurationError(`Data directory ${directory}: could not take its lock file ${lockPath}`))
  })

/** Removes the lock if it is still ours. */
const release = (lockPath: string) =>
  Effect.sync(() => {
    if (readHolder(lockPath)?.pid === process.pid) rmSync(lockPath, { force: true })
  })

/** Holds `DATA_DIR`'s lock for the life of the scope. */
export const lockDataDirectory = (dataDir: string) =>
  Effect.acquireRelease(Effect.suspend(() => acquire(resolve(dataDir))), release)
