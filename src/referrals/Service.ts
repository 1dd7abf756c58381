/**
 * The rules of referrals: who may see and change which program, code, referral and commission; codes and
 * their QR; reviews of flagged referrals; payouts; the summary and report (SQL aggregates).
 *
 * The merchant API acts with an API key on its own store and mode (any other customer is 404); the
 * console acts with a user session under the access policy: customer.read to read, marketing.manage to
 * configure, customer.write (Owner, Admin) to review and pay out.
 */
import { Effect, Option, Schema } from "effect"
import type { Permission } from "../../domain/Access.ts"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import type { CustomerId, ReferralId, StoreId } from "../../domain/Ids.ts"
import {
  CommissionList,
  type CommissionListParams,
  CommissionPayout,
  CommissionSummary,
  CommissionTotals,
  type ModeParams,
  type PayoutCommissions,
  ReferralCode,
  ReferralFunnel,
  ReferralInvite,
  ReferralList,
  type ReferralListParams,
  ReferralQr,
  ReferralReport,
  ReferrerCommissions,
  type ReviewReferral,
  type UpdateReferralProgram
} from "../../domain/Referrals.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { maskName } from "../platform/Text.ts"
import { Idempotency, scopeOf } from "../platform/Idempotency.ts"
import { Outbox } from "../platform/Outbox.ts"
import { pageAfter } from "../platform/Pagination.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { currentDate } from "../platform/Time.ts"
import { StoresService } from "../stores/Service.ts"
import { releasePoints } from "./Conversion.ts"
import { shareQr } from "./Qr.ts"
import { ReferralsRepo, type ReferralCustomerRow } from "./Repo.ts"
import { newReferralCode } from "./Rules.ts"
import { addTo, byStatus, encodeCommission, noSums, toCommission, toProgram, toReferral, toTotals } from "./View.ts"
import { traced } from "../platform/Traced.ts"

/** How many codes are drawn before giving up (each collision is about one in 31^8 ÷ customers). */
const CODE_ATTEMPTS = 5

export class ReferralsService extends Effect.Service<ReferralsService>()("referrals/ReferralsService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* ReferralsRepo, "inTransaction")
    const access = yield* AccessService
    const idempotency = yield* Idempotency
    const outbox = yield* Outbox
    const publicUrl = yield* PublicBaseUrl
    const stores = yield* StoresService
    const encodePayout = Schema.encodeSync(CommissionPayout)

    const customerNotFound = (id: string, param = "id") => new NotFound({ message: `No such customer: ${id}`, param })
    const referralNotFound = (id: string) => new NotFound({ message: `No such referral: ${id}`, param: "referralId" })
    const codeNotFound = (code: string) => new NotFound({ message: `No such referral code: ${code}`, param: "code" })

    const customerOfKey = <A, E, R>(id: CustomerId, use: (customer: ReferralCustomerRow) => Effect.Effect<A, E, R>) =>
      access.withApiKey((key) =>
        Effect.flatMap(repo.findCustomer(id), (found): Effect.Effect<A, E | NotFound, R> => {
          const own = Option.filter(found, (row) => row.store_id === key.storeId && row.livemode === key.livemode)
          return Option.isNone(own) ? Effect.fail(customerNotFound(id)) : use(own.value)
        }))

    const customerOfUser = <A, E, R>(id: CustomerId, permission: Permission, param: string, use: (found: ReferralCustomerRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findCustomer(id), (row) => row.store_id, permission, () => customerNotFound(id, param), use)
      )

    const storeOfUser = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))

    // ---------------------------------------------------------------------------------------------
    // Codes and QR
    // ---------------------------------------------------------------------------------------------

    /** The customer's code, made the first time: the same one ever after, whoever asks at once. */
    const codeOf = (customer: ReferralCustomerRow) =>
      Effect.gen(function*() {
        if (customer.referral_code !== null) return customer.referral_code
        for (let attempt = 0; attempt < CODE_ATTEMPTS; attempt++) {
          const assigned = yield* repo.assignCode(customer.id, newReferralCode())
          if (Option.isSome(assigned)) return assigned.value
        }
        return yield* Effect.dieMessage("no free referral code after several draws")
      })

    const shareUrlOf = (code: string) => Effect.map(publicUrl.get, (origin) => `${origin}/r/${code}`)

    const codeView = (customer: ReferralCustomerRow) =>
      Effect.gen(function*() {
        const code = yield* codeOf(customer)
        return new ReferralCode({ object: "referral_code", customer_id: customer.id, code, share_url: yield* shareUrlOf(code) })
      })

    const qrView = (customer: ReferralCustomerRow) =>
      Effect.gen(function*() {
        const { code, share_url } = yield* codeView(customer)
        const qr = yield* shareQr(share_url)
        return new ReferralQr({ object: "referral_qr", customer_id: customer.id, code, share_url, ...qr })
      })

    const code = traced("Referrals.code")(function*(id: CustomerId) {
      return yield* customerOfKey(id, codeView)
    })

    const qr = traced("Referrals.qr")(function*(id: CustomerId) {
      return yield* customerOfKey(id, qrView)
    })

    const qrForUser = traced("Referrals.qrForUser")(function*(id: CustomerId) {
      return yield* customerOfUser(id, "customer.read", "customerId", qrView)
    })

    // ---------------------------------------------------------------------------------------------
    // Share links (public)
    // ---------------------------------------------------------------------------------------------

    const referrerOfCode = (code: string) =>
      Effect.flatMap(repo.findByCode(code.toUpperCase()), Option.match({ onNone: () => Effect.fail(codeNotFound(code)), onSome: Effect.succeed }))

    /** Where a share link sends its visitor: the join page, if the code exists. */
    const joinPath = traced("Referrals.joinPath")(function*(code: string) {
      const referrer = yield* referrerOfCode(code)
      return `/r/${encodeURIComponent(referrer.referral_code ?? code)}/join`
    }, AccessService.forPublicLink("a referral share link, opened by its code"))

    /** The join page's content; each view counts as one visit of the share link. */
    const invite = traced("Referrals.invite")(function*(code: string) {
      const referrer = yield* referrerOfCode(code)
      const shown = referrer.referral_code ?? code
      yield* repo.insertVisit({ storeId: referrer.store_id, livemode: referrer.livemode, referrerId: referrer.id, at: yield* currentDate })
      const store = yield* stores.getById(referrer.store_id).pipe(Effect.orDie)
      const program = yield* repo.program(referrer.store_id)
      const points = program.active ? program.referee_points : 0
      return new ReferralInvite({
        object: "referral_invite",
        code: shown,
        store: { name: store.name, branding: store.branding },
        referrer: { name: maskName(referrer.name) },
        referee_points: points,
        how_to_join: `Give the code ${shown} when you sign up at ${store.name}, then pay with KHQR` +
          (points > 0 ? `: your first payment earns you ${points} points.` : ".")
      })
    }, AccessService.forPublicLink("the join page of a referral share link, opened by its code"))

    // ---------------------------------------------------------------------------------------------
    // Program
    // ---------------------------------------------------------------------------------------------

    const program = traced("Referrals.program")(function*(storeId: StoreId) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          return toProgram(yield* repo.program(store.storeId))
        }))
    })

    const configure = traced("Referrals.configure")(function*(storeId: StoreId, input: UpdateReferralProgram) {
      return yield* storeOfUser(storeId, "marketing.manage", (store) =>
        Effect.gen(function*() {
          const current = yield* repo.program(store.storeId)
          return toProgram(yield* repo.saveProgram({
            store_id: store.storeId,
            active: input.active ?? current.active,
            referrer_points: input.referrer_points ?? current.referrer_points,
            referee_points: input.referee_points ?? current.referee_points,
            commission_percent: input.commission_percent === undefined ? current.commission_percent : String(Number(input.commission_percent)),
            commission_window_days: input.commission_window_days ?? current.commission_window_days,
            max_referrals_per_day: input.max_referrals_per_day ?? current.max_referrals_per_day,
            at: yield* currentDate
          }))
        }))
    })

    // ---------------------------------------------------------------------------------------------
    // Referrals and commissions
    // ---------------------------------------------------------------------------------------------

    const listOf = (flaggedOnly: boolean) => (storeId: StoreId, params: ReferralListParams) =>
      storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const page = yield* pageAfter(params, (position) => repo.listReferrals(store.storeId, livemode, flaggedOnly, params.limit, position))
          return new ReferralList({ ...page, data: page.data.map(toReferral) })
        }))
    const list = traced("Referrals.list")(listOf(false))
    const flagged = traced("Referrals.flagged")(listOf(true))

    const commissions = traced("Referrals.commissions")(function*(storeId: StoreId, params: CommissionListParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const page = yield* pageAfter(params, (position) =>
            repo.listCommissions(store.storeId, livemode, params.status ?? null, params.limit, position))
          return new CommissionList({ ...page, data: page.data.map(toCommission) })
        }))
    })

    const summary = traced("Referrals.summary")(function*(storeId: StoreId, params: ModeParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const rows = yield* repo.referrerTotals({ storeId: store.storeId, livemode })
          const referrers = new Map<CustomerId, { referrals: number; rows: Array<typeof rows[number]> }>()
          for (const row of rows) {
            const entry = referrers.get(row.referrer_id) ?? { referrals: row.referrals, rows: [] }
            entry.rows.push(row)
            referrers.set(row.referrer_id, entry)
          }
          return new CommissionSummary({
            object: "commission_summary",
            store_id: store.storeId,
            livemode,
            data: Array.from(referrers, ([referrer_id, entry]) => {
              const sums = byStatus(entry.rows)
              return new ReferrerCommissions({
                referrer_id,
                accrued: toTotals(sums.accrued),
                paid: toTotals(sums.paid),
                held: toTotals(sums.held),
                referrals: entry.referrals
              })
            })
          })
        }))
    })

    const report = traced("Referrals.report")(function*(storeId: StoreId, params: ModeParams) {
      return yield* storeOfUser(storeId, "customer.read", (store) =>
        Effect.gen(function*() {
          const livemode = params.livemode ?? false
          const funnel = yield* repo.funnel({ storeId: store.storeId, livemode })
          const sums = byStatus(yield* repo.commissionTotals({ storeId: store.storeId, livemode }))
          return new ReferralReport({
            object: "referral_report",
            store_id: store.storeId,
            livemode,
            funnel: new ReferralFunnel({
              ...funnel,
              conversion_rate: funnel.referrals === 0 ? 0 : Math.round((funnel.converted / funnel.referrals) * 10_000) / 10_000
            }),
            commissions: new CommissionTotals({
              held: toTotals(sums.held),
              accrued: toTotals(sums.accrued),
              paid: toTotals(sums.paid),
              voided: toTotals(sums.voided)
            })
          })
        }))
    })

    const payoutNow = (storeId: StoreId, livemode: boolean, referrerId: CustomerId | null) =>
      repo.inTransaction(Effect.gen(function*() {
        const at = yield* currentDate
        const paid = yield* repo.payout({ storeId, livemode, referrerId, at })
        const totals = noSums()
        for (const row of paid) {
          addTo(totals, row.currency, row.amount)
          yield* outbox.emit({ storeId, livemode, type: "commission.paid", object: encodeCommission(toCommission(row)), at })
        }
        return new CommissionPayout({ object: "commission_payout", count: paid.length, totals: toTotals(totals) })
      }))

    const payout = traced("Referrals.payout")(function*(
      storeId: StoreId,
      input: PayoutCommissions,
      idempotencyKey: string | undefined
    ) {
      return yield* storeOfUser(storeId, "customer.write", (store) =>
        Effect.gen(function*() {
          const livemode = input.livemode ?? false
          if (input.referrer_id !== undefined) {
            const referrer = Option.filter(yield* repo.findCustomer(input.referrer_id), (row) => row.store_id === store.storeId)
            if (Option.isNone(referrer)) return yield* customerNotFound(input.referrer_id, "referrer_id")
          }
          return yield* idempotency.once(
            scopeOf({ storeId: store.storeId, livemode }, idempotencyKey),
            { operation: "commissions.payout", input },
            201,
            encodePayout,
            () => payoutNow(store.storeId, livemode, input.referrer_id ?? null)
          )
        }))
    })

    const review = traced("Referrals.review")(function*(storeId: StoreId, referralId: ReferralId, input: ReviewReferral) {
      return yield* storeOfUser(storeId, "customer.write", (store) =>
        Effect.gen(function*() {
          const user = yield* access.currentUser
          const reviewed = yield* repo.inTransaction(Effect.gen(function*() {
            const found = Option.filter(yield* repo.lockReferral(referralId), (row) => row.store_id === store.storeId)
            if (Option.isNone(found)) return yield* referralNotFound(referralId)
            const referral = found.value
            if (referral.status !== "flagged") {
              return yield* new InvalidState({
                message: `Referral ${referralId} is ${referral.status}: only a flagged referral can be reviewed`,
                param: "referralId"
              })
            }
            const cleared = input.decision === "clear"
            if (cleared) yield* repo.moveCommissions(referral.id, ["held"], "accrued")
            else yield* repo.moveCommissions(referral.id, ["held", "accrued"], "voided")
            return yield* repo.saveReferral({
              ...referral,
              status: cleared ? (referral.converted_at === null ? "pending" : "converted") : "voided",
              reviewed_by: user.userId,
              reviewed_at: yield* currentDate,
              review_decision: input.decision,
              review_note: input.note ?? null
            })
          }))
          yield* releasePoints(reviewed).pipe(Effect.orDie)
          return toReferral(reviewed)
        }))
    })

    return {
      code,
      qr,
      qrForUser,
      joinPath,
      invite,
      program,
      configure,
      list,
      flagged,
      commissions,
      summary,
      payout,
      report,
      review
    } as const
  }),
  dependencies: [ReferralsRepo.Default, AccessService.Default, Idempotency.Default, Outbox.Default, StoresService.Default]
}) {}
