/**
 * The crash cycle, repeated (`npm run bench:durability`): on the embedded default, and on the local
 * PostgreSQL when one answers, BENCH_CRASH_CYCLES times (default 10) — writes under load, SIGKILL, a
 * restart on the same data, every acknowledged write checked and the ledger balanced — after the races of
 * test/support/Durability.ts once. Prints one line per cycle and a table; exits 1 on any violation.
 * BENCH_DATABASES=embedded (or postgres) runs one of the two.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  crashAndRestart,
  freshServerDatabase,
  makeMerchant,
  runRaces,
  serverAnswers,
  type Service,
  type ServiceOptions,
  startService
} from "../test/support/Durability.ts"

const CYCLES = Number(process.env["BENCH_CRASH_CYCLES"] ?? 10)
const log = (line: string) => console.log(`[bench:durability] ${line}`)

interface Row {
  readonly database: string
  readonly cycles: number
  readonly acknowledged: number
  readonly missing: number
  readonly unbalanced: number
  readonly raceFailures: number
  readonly restartMs: Array<number>
}

const runOn = async (database: "embedded" | "postgres"): Promise<Row> => {
  const dataDir = mkdtempSync(join(tmpdir(), `merchant-bench-durability-${database}-`))
  const server = database === "postgres" ? await freshServerDatabase("bench_durability") : undefined
  const options: ServiceOptions = server === undefined ? { dataDir } : { dataDir, databaseUrl: server.url }
  let service: Service | undefined
  const row = { database, cycles: 0, acknowledged: 0, missing: 0, unbalanced: 0, raceFailures: 0, restartMs: [] as Array<number> }
  try {
    service = await startService(options)
    const secret = await makeMerchant(service.baseUrl)
    const races = await runRaces(service.baseUrl, secret)
    row.raceFailures = races.violations.length + races.serverErrors + races.wrongAnswers + races.unanswered
    log(`${database}: races: ${races.requests} requests, ${row.raceFailures} failures, slowest ${Math.round(races.slowestMs)} ms`)
    for (const violation of races.violations) log(`  ${violation}`)
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const crash = await crashAndRestart(service, options, secret)
      service = crash.restarted
      row.cycles = cycle
      row.acknowledged += crash.acknowledgedPayments + crash.acknowledgedRefunds
      row.missing += crash.missing.length
      if (crash.imbalance !== "0") row.unbalanced += 1
      row.restartMs.push(crash.restartMs)
      log(
        `${database}: cycle ${cycle}: ${crash.acknowledgedPayments} payments and ${crash.acknowledgedRefunds} refunds acknowledged, ` +
          `${crash.missing.length} missing, imbalance ${crash.imbalance}, listening ${Math.round(crash.restartMs)} ms after SIGKILL`
      )
      for (const line of crash.missing.slice(0, 5)) log(`  ${line}`)
    }
    return row
  } finally {
    await service?.process.stop(10_000)
    await server?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const main = async () => {
  const wanted = process.env["BENCH_DATABASES"]?.split(",").map((s) => s.trim())
  const databases = (["embedded", "postgres"] as const).filter((database) => wanted === undefined || wanted.includes(database))
  const rows: Array<Row> = []
  for (const database of databases) {
    if (database === "postgres" && !(await serverAnswers())) {
      log(`no PostgreSQL answers at the local server: postgres skipped`)
      continue
    }
    rows.push(await runOn(database))
  }
  const sorted = (values: Array<number>) => [...values].sort((a, b) => a - b)
  console.log("")
  console.log("| database | crash cycles | writes acknowledged | missing after restart | unbalanced ledgers | race failures | SIGKILL → listening (median / max) |")
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  for (const row of rows) {
    const times = sorted(row.restartMs)
    const median = times[Math.floor(times.length / 2)] ?? 0
    console.log(
      `| ${row.database} | ${row.cycles} | ${row.acknowledged} | ${row.missing} | ${row.unbalanced} | ${row.raceFailures} | ` +
        `${(median / 1000).toFixed(1)} s / ${((times.at(-1) ?? 0) / 1000).toFixed(1)} s |`
    )
  }
  if (rows.some((row) => row.missing > 0 || row.unbalanced > 0 || row.raceFailures > 0)) process.exitCode = 1
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
