/**
 * Cursor pagination of `GET /v1/customers` as a property: whatever the number of customers and the page
 * size, paging from the first page to the last returns every customer that existed when paging began
 * exactly once, newest first, even while other customers are being created between and during the page
 * requests; the customers created meanwhile are never repeated either.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber, Runtime } from "effect"
import * as fc from "fast-check"
import type { Customer } from "../../domain/Customers.ts"
import { clientAs } from "../support/Client.ts"
import { newMerchant } from "../support/Merchant.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

interface Run {
  /** Customers created before paging begins. */
  readonly existing: number
  readonly pageSize: number
  /** Customers created while the pages are read, by `writers` concurrent writers. */
  readonly createdMeanwhile: number
  readonly writers: number
}

const runArbitrary: fc.Arbitrary<Run> = fc.record({
  existing: fc.integer({ min: 0, max: 45 }),
  pageSize: fc.integer({ min: 1, max: 12 }),
  createdMeanwhile: fc.integer({ min: 0, max: 30 }),
  writers: fc.integer({ min: 1, max: 4 })
})

let serial = 0

/** Newest first: by `created_at`, then by id, both descending. */
const isNewestFirst = (customers: ReadonlyArray<Customer>) =>
  customers.every((customer, index) => {
    if (index === 0) return true
    const previous = customers[index - 1]!
    return previous.created_at > customer.created_at ||
      (previous.created_at === customer.created_at && previous.id > customer.id)
  })

describe("customer pagination", () => {
  layer(testAppLayer(), { timeout: 300_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("returns every customer exactly once while customers are being created", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const runtime = yield* Effect.runtime<never>()
        const run = <A, E>(effect: Effect.Effect<A, E>) => Runtime.runPromise(runtime)(effect)

        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(runArbitrary, async ({ createdMeanwhile, existing, pageSize, writers }) => {
              const { key } = await run(newMerchant(app))
              const api = await run(clientAs(app, key))
              const create = (label: string) =>
                api.customers.create({ payload: { email: `${label}-${++serial}@page.example.test` }, headers: {} })
              const before = await run(Effect.forEach(
                Array.from({ length: existing }, (_, i) => i),
                () => create("existing"),
                { concurrency: 4 }
              ))

              // Writers create customers while the reader pages; the reader never waits for them.
              const perWriter = Array.from({ length: writers }, (_, writer) =>
                Math.floor(createdMeanwhile / writers) + (writer < createdMeanwhile % writers ? 1 : 0))
              const writing = await run(Effect.forkDaemon(Effect.forEach(
                perWriter,
                (count) => Effect.forEach(Array.from({ length: count }), () => create("meanwhile"), { discard: true }),
                { concurrency: "unbounded", discard: true }
              )))
              const seen: Array<Customer> = []
              let cursor: string | undefined
              let pages = 0
              do {
                const page = await run(api.customers.list({
                  urlParams: cursor === undefined ? { limit: pageSize } : { limit: pageSize, cursor }
                }))
                expect(page.data.length).toBeLessThanOrEqual(pageSize)
                expect(page.has_more).toBe(page.next_cursor !== null)
                seen.push(...page.data)
                cursor = page.next_cursor ?? undefined
                pages++
                expect(pages).toBeLessThan(200)
              } while (cursor !== undefined)
              await run(Fiber.join(writing))

              const ids = seen.map((customer) => customer.id)
              expect(new Set(ids).size, "no customer twice").toBe(ids.length)
              const expected = before.map((customer) => customer.id)
              for (const id of expected) expect(ids.filter((seenId) => seenId === id), id).toHaveLength(1)
              expect(isNewestFirst(seen)).toBe(true)
              // Whatever else was listed was created meanwhile, in this store.
              const all = await run(api.customers.list({ urlParams: { limit: 100 } }))
              const known = new Set(all.data.map((customer) => customer.id))
              expect(ids.every((id) => known.has(id))).toBe(true)
              expect(all.data).toHaveLength(existing + createdMeanwhile)
            }),
            { numRuns: 12 }
          )
        )
      }))
  })
})
