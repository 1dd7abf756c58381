/**
 * Access the compiler enforces (src/access/Service.ts): a store's data is read and written only under a
 * `StoreAuthorized` proof, which only AccessService makes. The `@ts-expect-error` lines are the test that
 * matters most: `npm run typecheck` fails when one of them compiles, that is when a store-data operation
 * can run without an access check. The rest runs the checks in-process against the suite's database.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { type ApiKeyPrincipal, CurrentPrincipal, type UserPrincipal } from "../../domain/Auth.ts"
import { NotFound } from "../../domain/Errors.ts"
import type { ApiKeyId, SessionId, StoreId, UserId } from "../../domain/Ids.ts"
import type { Role } from "../../domain/Access.ts"
import { AccessService, type StoreAuthorized, storeData } from "../../src/access/Service.ts"
import type { AccountsService } from "../../src/accounts/Service.ts"
import type { AiService } from "../../src/ai/Service.ts"
import type { AnalyticsService } from "../../src/analytics/Service.ts"
import type { ApiKeysService } from "../../src/apikeys/Service.ts"
import type { BillingService } from "../../src/billing/Service.ts"
import type { ConnectorsService } from "../../src/connectors/Service.ts"
import type { CustomersService } from "../../src/customers/Service.ts"
import type { GamesService } from "../../src/games/Service.ts"
import type { LedgerService } from "../../src/ledger/Service.ts"
import type { LinksService } from "../../src/links/Service.ts"
import type { LoyaltyService } from "../../src/loyalty/Service.ts"
import type { NotificationsService } from "../../src/notifications/Service.ts"
import type { PaymentsService } from "../../src/payments/Service.ts"
import type { PromotionsService } from "../../src/promotions/Service.ts"
import type { ReferralsService } from "../../src/referrals/Service.ts"
import type { RevenueSharesService } from "../../src/revenue-shares/Service.ts"
import type { RiskService } from "../../src/risk/Service.ts"
import type { SegmentsService } from "../../src/segments/Service.ts"
import type { StoresService } from "../../src/stores/Service.ts"
import type { VerificationService } from "../../src/verification/Service.ts"
import type { WebhooksService } from "../../src/webhooks/Service.ts"
import { inProcessLayer, seedStore } from "../support/InProcess.ts"

// -------------------------------------------------------------------------------------------------
// What the compiler refuses
// -------------------------------------------------------------------------------------------------

interface NoteRow {
  readonly id: string
  readonly store_id: StoreId
}

/** A repo as a service sees it through `storeData`: every operation requires the proof. */
const makeNotes = (rows: ReadonlyArray<NoteRow>) => {
  const reads: Array<string> = []
  const repo = storeData({
    find: (id: string) =>
      Effect.sync(() => {
        reads.push(id)
        return Option.fromNullable(rows.find((row) => row.id === id))
      }),
    count: Effect.sync(() => rows.length),
    inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => effect
  }, "inTransaction")
  return { repo, reads }
}

/** What a handler, a consumer or a runtime can run: nothing may be left to provide. */
const runnable = <A, E>(effect: Effect.Effect<A, E, never>) => effect

/** The public shape of a service method: the principal of the request, nothing else. */
const handlerShaped = <A, E>(effect: Effect.Effect<A, E, CurrentPrincipal>) => effect

const noteOf = (id: string, store: string): NoteRow => ({ id, store_id: store as StoreId })

describe("the proof of an access check, in the types", () => {
  it("refuses a store-data operation without one", () => {
    const { repo } = makeNotes([])
    // @ts-expect-error a read of a store's data with no access check leaves StoreAuthorized to provide
    runnable(repo.find("note_1"))
    // @ts-expect-error so does an operation that is an effect rather than a function
    runnable(repo.count)
    // @ts-expect-error and one wrapped in a pass-through combinator: the transaction does not vouch for it
    runnable(repo.inTransaction(repo.find("note_1")))
    // @ts-expect-error a method that forgets the check cannot take a handler's place
    handlerShaped(Effect.gen(function*() {
      return yield* repo.find("note_1")
    }))
    // Named grants do, and say why in review.
    runnable(repo.find("note_1").pipe(AccessService.asSystem("the test, acting for the system")))
    runnable(repo.count.pipe(AccessService.forPublicLink("the test, as a public page")))
    expect(true).toBe(true)
  })

  it("refuses a proof made outside AccessService", () => {
    // @ts-expect-error the brand is a symbol only src/access/Service.ts can name
    const forged: StoreAuthorized = { basis: { _tag: "System", reason: "forged" } }
    expect(forged.basis._tag).toBe("System")
  })

  it("keeps the proof out of every public method: only the listed internal ones require it", () => {
    /** The methods of a service whose effect requires StoreAuthorized. */
    type RequiringProof<S> = {
      [K in keyof S]: S[K] extends (...args: ReadonlyArray<never>) => infer Out ? Out extends Effect.Effect<unknown, unknown, infer R> ? [StoreAuthorized] extends [R] ? K : never : never
        : S[K] extends Effect.Effect<unknown, unknown, infer R> ? [StoreAuthorized] extends [R] ? K : never
        : never
    }[keyof S]
    type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false

    // Internal methods another area calls under its own proof (or a job under a named system one).
    const internal: {
      payments: Same<RequiringProof<PaymentsService>, "createFor" | "applyTransition">
      customers: Same<RequiringProof<CustomersService>, "createFor" | "checkPayer" | "findRow">
      stores: Same<RequiringProof<StoresService>, "getById" | "findBranch" | "markBranchHasHistory">
      segments: Same<RequiringProof<SegmentsService>, "previewOf" | "contains" | "ofStore" | "find">
      games: Same<RequiringProof<GamesService>, "openInstantGames">
      risk: Same<RequiringProof<RiskService>, "open" | "casesOf">
      analytics: Same<RequiringProof<AnalyticsService>, "dailyOf">
      notifications: Same<RequiringProof<NotificationsService>, "notify" | "retryDue">
      verification: Same<RequiringProof<VerificationService>, "latestStatus">
      accounts: Same<RequiringProof<AccountsService>, never>
      billing: Same<RequiringProof<BillingService>, never>
      loyalty: Same<RequiringProof<LoyaltyService>, never>
      links: Same<RequiringProof<LinksService>, never>
      webhooks: Same<RequiringProof<WebhooksService>, never>
      apiKeys: Same<RequiringProof<ApiKeysService>, never>
      promotions: Same<RequiringProof<PromotionsService>, "simulateDraft">
      referrals: Same<RequiringProof<ReferralsService>, never>
      revenueShares: Same<RequiringProof<RevenueSharesService>, never>
      connectors: Same<RequiringProof<ConnectorsService>, never>
      ledger: Same<RequiringProof<LedgerService>, never>
      ai: Same<RequiringProof<AiService>, never>
    } = {
      payments: true,
      customers: true,
      stores: true,
      segments: true,
      games: true,
      risk: true,
      analytics: true,
      notifications: true,
      verification: true,
      accounts: true,
      billing: true,
      loyalty: true,
      links: true,
      webhooks: true,
      apiKeys: true,
      promotions: true,
      referrals: true,
      revenueShares: true,
      connectors: true,
      ledger: true,
      ai: true
    }
    expect(Object.values(internal).every(Boolean)).toBe(true)
  })
})

// -------------------------------------------------------------------------------------------------
// What AccessService decides, in-process
// -------------------------------------------------------------------------------------------------

const apiKeyOf = (storeId: StoreId, organizationId: string): ApiKeyPrincipal => ({
  _tag: "ApiKey",
  keyId: "key_test" as ApiKeyId,
  storeId,
  organizationId: organizationId as ApiKeyPrincipal["organizationId"],
  livemode: false
})

/** A user who is a member of the store's organization with `role` (or of none). */
const userWith = (organizationId: string, role: Role | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const userId = `usr_${Math.random().toString(36).slice(2, 12)}` as UserId
    yield* sql`INSERT INTO users (id, email, password_hash) VALUES (${userId}, ${`${userId}@example.test`}, 'x')`
    if (role !== undefined) {
      yield* sql`INSERT INTO memberships (organization_id, user_id, role) VALUES (${organizationId}, ${userId}, ${role})`
    }
    return { _tag: "User", userId, email: `${userId}@example.test`, sessionId: "sess_test" as SessionId, platformAdmin: false } satisfies UserPrincipal
  }).pipe(Effect.orDie)

const accessLayer = AccessService.Default.pipe(Layer.provideMerge(inProcessLayer))

describe("AccessService grants the proof only where the check passes", () => {
  layer(accessLayer, { timeout: 120_000, excludeTestServices: true })("in-process", (it) => {
    it.effect("a member whose role grants the permission reads the store's data; the others do not get to", () =>
      Effect.gen(function*() {
        const access = yield* AccessService
        const { organizationId, storeId } = yield* seedStore
        const other = yield* seedStore
        const { reads, repo } = makeNotes([noteOf("note_1", storeId), noteOf("note_2", other.storeId)])
        const readNote = (id: string) => access.withStore(storeId, "payment.write", () => repo.find(id))

        const admin = yield* userWith(organizationId, "admin")
        const found = yield* readNote("note_1").pipe(Effect.provideService(CurrentPrincipal, admin))
        expect(Option.isSome(found)).toBe(true)

        // A role without the permission: 403, and the data is never read.
        const analyst = yield* userWith(organizationId, "analyst")
        const refused = yield* Effect.flip(readNote("note_1").pipe(Effect.provideService(CurrentPrincipal, analyst)))
        expect(refused._tag).toBe("Forbidden")

        // Another tenant: the store does not exist for them (404).
        const stranger = yield* userWith(other.organizationId, "owner")
        const hidden = yield* Effect.flip(readNote("note_1").pipe(Effect.provideService(CurrentPrincipal, stranger)))
        expect(hidden).toEqual(new NotFound({ message: `No such store: ${storeId}`, param: "store_id" }))
        expect(reads).toEqual(["note_1"])
      }))

    it.effect("an object of another tenant's store answers as a missing one, by the object's own 404", () =>
      Effect.gen(function*() {
        const access = yield* AccessService
        const { organizationId, storeId } = yield* seedStore
        const other = yield* seedStore
        const { repo } = makeNotes([noteOf("note_1", storeId), noteOf("note_2", other.storeId)])
        const owner = yield* userWith(organizationId, "owner")
        const noteNotFound = (id: string) => () => new NotFound({ message: `No such note: ${id}`, param: "id" })
        const open = (id: string) =>
          access.withOwned(repo.find(id), (row) => row.store_id, "payment.read", noteNotFound(id), (row) => Effect.succeed(row.id)).pipe(
            Effect.provideService(CurrentPrincipal, owner)
          )
        expect(yield* open("note_1")).toBe("note_1")
        const foreign = yield* Effect.flip(open("note_2"))
        const missing = yield* Effect.flip(open("note_3"))
        expect(foreign).toEqual(new NotFound({ message: "No such note: note_2", param: "id" }))
        expect(missing).toEqual(new NotFound({ message: "No such note: note_3", param: "id" }))
      }))

    it.effect("an API key acts on its own store only, with the Developer role's permissions", () =>
      Effect.gen(function*() {
        const access = yield* AccessService
        const { organizationId, storeId } = yield* seedStore
        const other = yield* seedStore
        const { repo } = makeNotes([noteOf("note_1", storeId)])
        const key = apiKeyOf(storeId, organizationId)
        const asKey = <A, E>(effect: Effect.Effect<A, E, CurrentPrincipal>) => Effect.provideService(effect, CurrentPrincipal, key)

        expect(Option.isSome(yield* asKey(access.withApiKey(() => repo.find("note_1"))))).toBe(true)
        expect(Option.isSome(yield* asKey(access.withStore(storeId, "payment.read", () => repo.find("note_1"))))).toBe(true)
        const refund = yield* Effect.flip(asKey(access.withStore(storeId, "payment.refund", () => repo.find("note_1"))))
        expect(refund._tag).toBe("Forbidden")
        const foreign = yield* Effect.flip(asKey(access.withStore(other.storeId, "payment.read", () => repo.find("note_1"))))
        expect(foreign._tag).toBe("NotFound")
      }))
  })
})
