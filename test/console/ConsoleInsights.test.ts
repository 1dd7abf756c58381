/**
 * The console's games, insights, integrations and platform procedures through the typed client
 * (domain/ConsoleClient.ts) against the running service: the same rules as their REST routes — another
 * tenant's game is not found, the 100 % rule of revenue shares holds, the admin procedures are for platform
 * administrators only — and a game's draw record, which verifies from the seed once the game has ended.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either } from "effect"
import { makeConsoleClient } from "../../domain/ConsoleClient.ts"
import { verifyGame } from "../../domain/Games.ts"
import { createStore, signUp } from "../support/Accounts.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const ADMIN_EMAIL = "console-admin@example.test"

const consoleFor = (app: TestAppShape, sessionToken: string) =>
  makeConsoleClient({ baseUrl: app.baseUrl, sessionToken }).pipe(Effect.provide(FetchHttpClient.layer))

const failureTag = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left._tag : "succeeded"))

const owner = (app: TestAppShape, email?: string) =>
  Effect.gen(function*() {
    const user = yield* Effect.promise(() => signUp(app, email === undefined ? {} : { email }))
    const store = yield* Effect.promise(() => createStore(app, user.token, "Console Cafe"))
    return { user, storeId: store.id, client: yield* consoleFor(app, user.token) }
  })

describe("console insights RPC", () => {
  layer(testAppLayer({ platformAdminEmails: [ADMIN_EMAIL] }), { timeout: 120_000, excludeTestServices: true })("typed client", (it) => {
    it.scoped("a game's draw record discloses its seed at the end, verifies, and stays in its tenant", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const stranger = yield* owner(app)
        const game = yield* merchant.client.CreateGame({
          store_id: merchant.storeId,
          name: "Lucky wheel",
          type: "spin",
          prizes: [{ name: "100 points", kind: "points", points: 100, weight: 1 }, { name: "Try again", kind: "nothing", weight: 3 }]
        })
        const before = yield* merchant.client.GameDrawRecord({ id: game.id })
        expect(before.seed).toBeNull()
        expect(before.seed_commitment).toBe(game.seed_commitment)
        expect(yield* failureTag(stranger.client.GameDrawRecord({ id: game.id }))).toBe("NotFound")
        expect(yield* failureTag(stranger.client.UpdateGame({ id: game.id, active: false }))).toBe("NotFound")

        const ended = yield* merchant.client.UpdateGame({ id: game.id, ends_at: new Date() })
        expect(ended.seed).not.toBeNull()
        const record = yield* merchant.client.GameDrawRecord({ id: game.id })
        expect(record.seed).toBe(ended.seed)
        expect(record.tables.at(-1)?.prizes.map((prize) => prize.id)).toEqual(game.prizes.map((prize) => prize.id))
        const report = yield* verifyGame({
          seed: record.seed!,
          seedCommitment: record.seed_commitment,
          tables: record.tables,
          plays: record.plays.map((play) => ({ id: play.id, prizeId: play.prize_id, version: play.version }))
        })
        expect(report.valid).toBe(true)
      }))

    it.scoped("revenue shares keep to 100 %; the notification log is the store's own", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const stranger = yield* owner(app)
        yield* merchant.client.CreateRevenueShare({ store_id: merchant.storeId, party: "Mall landlord", percent: "60" })
        expect(yield* failureTag(merchant.client.CreateRevenueShare({ store_id: merchant.storeId, party: "Franchisor", percent: "50" })))
          .toBe("InvalidState")
        const shares = yield* merchant.client.ListRevenueShares({ store_id: merchant.storeId })
        expect(shares.data.map((share) => share.percent)).toEqual(["60"])

        const log = yield* merchant.client.NotificationLog({ store_id: merchant.storeId })
        expect(log).toMatchObject({ object: "list", data: [], has_more: false })
        expect(yield* failureTag(stranger.client.NotificationLog({ store_id: merchant.storeId }))).toBe("NotFound")
      }))

    it.scoped("the platform procedures answer platform administrators only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* owner(app)
        const admin = yield* owner(app, ADMIN_EMAIL)
        const calls: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
          merchant.client.ListVerifications({}),
          merchant.client.ListPlatformSettings({}),
          merchant.client.SecurityPosture(),
          merchant.client.Monitoring(),
          merchant.client.PlatformAiUsage(),
          merchant.client.PlatformTrialBalance({}),
          merchant.client.PlatformReconcile()
        ]
        for (const call of calls) expect(yield* failureTag(call)).toBe("Forbidden")
        expect((yield* admin.client.ListVerifications({ status: "pending" })).object).toBe("list")
        const set = yield* admin.client.SetPlatformSetting({ key: "risk_velocity_max", value: "7" })
        expect(set.source).toBe("database")
        expect((yield* admin.client.ClearPlatformSetting({ key: "risk_velocity_max" })).source).not.toBe("database")
        expect((yield* admin.client.SecurityPosture()).checks.length).toBeGreaterThan(0)
      }))
  })
})
