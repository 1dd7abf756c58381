/**
 * Races, a crash under load and a restart, on the embedded default (what `npm start` runs with no
 * configuration) and on PostgreSQL when a server answers: the battery of test/support/Durability.ts, once
 * per database. bench/durability.ts repeats the crash cycle.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { crashAndRestart, freshServerDatabase, makeMerchant, runRaces, type Service, type ServiceOptions, startService } from "../support/Durability.ts"
import { postgresAvailable } from "../support/TestDatabase.ts"

const withPostgres = process.env["TEST_DATABASE"] !== "embedded" && await postgresAvailable()

const cleanUps: Array<() => Promise<unknown>> = []
afterAll(async () => {
  for (const cleanUp of cleanUps.reverse()) await cleanUp().catch(() => undefined)
})

/** A fresh data directory, and a fresh database on the server for "postgres". */
const prepare = async (database: "embedded" | "postgres"): Promise<ServiceOptions> => {
  const dataDir = mkdtempSync(join(tmpdir(), `merchant-durability-${database}-`))
  cleanUps.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  if (database === "embedded") return { dataDir }
  const server = await freshServerDatabase("test_durability")
  cleanUps.push(server.drop)
  return { dataDir, databaseUrl: server.url }
}

const track = (service: Service) => {
  cleanUps.push(() => service.process.stop(5_000))
  return service
}

const databases = withPostgres ? (["embedded", "postgres"] as const) : (["embedded"] as const)

describe.each(databases)("on the %s database", (database) => {
  it("answers races correctly, then keeps every acknowledged write across a SIGKILL under load", { timeout: 240_000 }, async () => {
    const options = await prepare(database)
    const service = track(await startService(options))
    const secret = await makeMerchant(service.baseUrl)

    const races = await runRaces(service.baseUrl, secret)
    expect(races.violations).toEqual([])
    expect(races.serverErrors).toBe(0)
    expect(races.wrongAnswers).toBe(0)
    expect(races.unanswered).toBe(0)

    const crash = await crashAndRestart(service, options, secret)
    track(crash.restarted)
    expect(crash.acknowledgedPayments).toBeGreaterThan(0)
    expect(crash.missing).toEqual([])
    expect(crash.imbalance).toBe("0")

    // The restarted service takes the same races again.
    const again = await runRaces(crash.restarted.baseUrl, secret)
    expect(again.violations).toEqual([])
    expect(again.serverErrors + again.wrongAnswers + again.unanswered).toBe(0)
    console.log(
      `${database}: races ${races.requests} requests, slowest ${Math.round(races.slowestMs)} ms; crash after ` +
        `${crash.acknowledgedPayments} payments / ${crash.acknowledgedRefunds} refunds acknowledged, ` +
        `listening again ${Math.round(crash.restartMs)} ms after SIGKILL`
    )
    expect(await crash.restarted.process.stop(15_000)).toEqual({ code: 0, signal: null })
  })
})
