/**
 * The rules of payments and refunds: who may see and change which payment, how a payment is created
 * (validated amounts, the KHQR payload, idempotency), and the lifecycle changes, which are sent as
 * messages to the payment's entity.
 */
import { Duration, Effect, Option, Schema, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { Permission } from "../../domain/Access.ts"
import { CurrentPrincipal } from "../../domain/Auth.ts"
import { PaymentChanged, PaymentFeedSynced, StoreSummary } from "../../domain/Console.ts"
import { Forbidden, InvalidRequest, InvalidState, MfaRequired, NotFound } from "../../domain/Errors.ts"
import type { BranchId, PaymentId, StoreId } from "../../domain/Ids.ts"
import {
  type CreatePayment,
  type CreateRefund,
  Payment,
  PaymentList,
  type PaymentListParams,
  PaymentStatus,
  Refund,
  RefundList
} from "../../domain/Payments.ts"
import type { ListParams } from "../../domain/Lists.ts"
import { AppConfig } from "../platform/Config.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { AccountsService } from "../accounts/Service.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { newId } from "../platform/Ids.ts"
import { Idempotency, scopeOf } from "../platform/Idempotency.ts"
import { addMillis, currentDate } from "../platform/Time.ts"
import { recordPaymentTransition } from "../platform/Metrics.ts"
import { type Currency, formatAmount, minorUnitsOf, parseAmount } from "../platform/Money.ts"
import { decodeCursor, toPage } from "../platform/Pagination.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { StorePaymentSettings } from "../stores/PaymentSettings.ts"
import { StoresService } from "../stores/Service.ts"
import { PlanLimits } from "../limits/Service.ts"
import { PaymentReads } from "./Reads.ts"
import { CustomersService } from "../customers/Service.ts"
import { announcePaymentChange, ofStore, subscribePaymentChanges } from "./Changes.ts"
import { PaymentEntity } from "./Entity.ts"
import { buildKhqr, TEST_MERCHANT } from "./Khqr.ts"
import type { PaymentAction } from "./Lifecycle.ts"
import { PaymentsRepo, type PaymentRow } from "./Repo.ts"
import { DECODED_ALREADY, toPayment, toRefund } from "./View.ts"
import { traced } from "../platform/Traced.ts"

/** The store and mode a payment belongs to. */
export interface PaymentOwner {
  readonly storeId: StoreId
  readonly livemode: boolean
}

/** A KHQR bill number holds 25 characters; a longer reference_id is shown cut, and kept whole on the payment. */
const BILL_NUMBER_LENGTH = 25

const simulateActions: Record<"scanned" | "paid" | "failed" | "expired", PaymentAction> = {
  scanned: "scan",
  paid: "pay",
  failed: "fail",
  expired: "expire"
}

/**
 * How long one subscription to a store's payment feed lasts. The feed is authorized when it opens; ending
 * it after a while makes the console subscribe again, so a signed-out user or a removed member stops
 * receiving it soon after.
 */
export const PAYMENT_FEED_LIFETIME = Duration.minutes(15)

/** Reads `created[gte]`-style bounds: ISO 8601 or Unix seconds. */
const parseTimestamp = (value: string | undefined, param: string) => {
  if (value === undefined) return Effect.succeed(undefined)
  const date = /^\d+$/.test(value) ? new Date(Number(value) * 1000) : new Date(value)
  return Number.isNaN(date.getTime())
    ? Effect.fail(new InvalidRequest({ message: `${param} must be an ISO 8601 timestamp or Unix seconds`, param }))
    : Effect.succeed(date)
}

/** Whether `amount` (minor units of `currency`) is at or above a decimal threshold such as "500.00". */
export const reachesThreshold = (amount: bigint, currency: Currency, threshold: string): boolean =>
  amount >= thresholdInMinorUnits(threshold, currency)

/** The smallest amount in minor units of `currency` that is at or above a decimal threshold such as "500.00". */
export const thresholdInMinorUnits = (threshold: string, currency: Currency): bigint => {
  const [whole = "0", fraction = ""] = threshold.split(".")
  // threshold × 10^minor, rounded up, without leaving integers: "0.005" USD is reached by 1 cent.
  const numerator = BigInt(whole + fraction) * 10n ** BigInt(minorUnitsOf(currency))
  const denominator = 10n ** BigInt(fraction.length)
  return (numerator + denominator - 1n) / denominator
}

export class PaymentsService extends Effect.Service<PaymentsService>()("payments/PaymentsService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* PaymentsRepo, "inTransaction")
    const stores = yield* StoresService
    const paymentSettings = yield* StorePaymentSettings
    const customers = yield* CustomersService
    const access = yield* AccessService
    const accounts = yield* AccountsService
    const idempotency = yield* Idempotency
    const publicUrl = yield* PublicBaseUrl
    const config = yield* AppConfig
    const paymentEntity = yield* PaymentEntity.client
    /** A payment's entity changes the payment's data: it is reached with proof of access like the repo. */
    const entity = (id: PaymentId) => storeData(paymentEntity(id))
    const changeFeed = yield* ChangeFeed
    const limits = yield* PlanLimits
    const reads = yield* PaymentReads

    const view = (row: PaymentRow) => Effect.map(publicUrl.get, (baseUrl) => toPayment(row, baseUrl))
    const encodePayment = Schema.encodeSync(Payment)
    const encodeRefund = Schema.encodeSync(Refund)

    const notFound = (id: PaymentId) => new NotFound({ message: `No such payment: ${id}`, param: "id" })

    /**
     * `use`, on the payments of a store in one mode, if the caller may `permission` them: a user any store
     * they may, an API key only its own store (AccessService) and its own mode.
     */
    const storeMode = <A, E, R>(
      storeId: StoreId,
      livemode: boolean,
      permission: Permission,
      use: (granted: StoreAccess) => Effect.Effect<A, E, R>
    ) =>
      access.withStore(storeId, permission, (granted): Effect.Effect<A, E | Forbidden, R> =>
        granted.principal._tag === "ApiKey" && granted.principal.livemode !== livemode
          ? Effect.fail(
            new Forbidden({
              message: `A ${granted.principal.livemode ? "live" : "test"}-mode API key cannot see ${livemode ? "live" : "test"}-mode payments`
            })
          )
          : use(granted))

    /**
     * `use`, on the payment `id`, if the caller may act on it: an API key sees its own store's payments of
     * its own mode; a user sees the payments of stores they may `permission`. Anything else does not exist.
     */
    const accessiblePayment = <A, E, R>(
      id: PaymentId,
      permission: "payment.read" | "payment.write" | "payment.refund",
      use: (payment: PaymentRow) => Effect.Effect<A, E, R>
    ) =>
      Effect.flatMap(CurrentPrincipal, (principal) =>
        principal._tag === "User"
          ? access.withOwned(repo.find(id), (payment) => payment.store_id, permission, () => notFound(id), use)
          : // An API key is the merchant's backend: every payment route is open to it, refunds included (which
            // the Developer role it acts with elsewhere does not grant), but only on its store's payments of its mode.
            access.withApiKey((key) =>
              Effect.flatMap(repo.find(id), (found): Effect.Effect<A, E | NotFound, R> => {
                const own = Option.filter(found, (payment) => payment.store_id === key.storeId && payment.livemode === key.livemode)
                return Option.isNone(own) ? Effect.fail(notFound(id)) : use(own.value)
              })
            ))

    /** The merchant account a payment of this store is paid into. */
    const merchantFor = traced("Payments.merchantFor")(function*(key: PaymentOwner) {
      const settings = yield* paymentSettings.of(key.storeId)
      // The key's store exists: a key's store is never deleted.
      const credentials = Option.flatMap(settings, (found) => found.credentials)
      if (key.livemode) {
        if (!Option.exists(settings, (found) => found.liveMode) || Option.isNone(credentials)) {
          return yield* new InvalidState({
            message: "This store is not in live mode: set its provider credentials and activate live mode first"
          })
        }
      }
      return Option.match(credentials, {
        onNone: () => TEST_MERCHANT,
        onSome: (c) => ({
          merchantType: "individual" as const,
          bakongAccountId: c.bakong_account_id,
          merchantName: c.merchant_name,
          merchantCity: c.merchant_city,
          acquiringBank: c.acquiring_bank
        })
      })
    })

    const unknownBranch = (branchId: BranchId) =>
      new InvalidRequest({ message: `No such branch in this store: ${branchId}`, param: "branch_id" })

    /** The branch a payment names must be an active branch of the payment's own store. */
    const checkBranch = (storeId: StoreId, branchId: BranchId) =>
      Effect.gen(function*() {
        const branch = yield* stores.findBranch(branchId)
        if (Option.isNone(branch) || branch.value.store_id !== storeId) return yield* unknownBranch(branchId)
        if (!branch.value.active) {
          return yield* new InvalidRequest({
            message: `Branch ${branchId} is deactivated; activate it to take payments there`,
            param: "branch_id"
          })
        }
      })

    /**
     * Creates a payment of a store in a mode. Callers have authorized the store already: an API key of
     * it, or a public payment link of it.
     */
    const createFor = (key: PaymentOwner, input: CreatePayment) =>
      Effect.gen(function*() {
        const amount = yield* parseAmount(input.amount, input.currency)
        const branchId = input.branch_id ?? null
        if (branchId !== null) yield* checkBranch(key.storeId, branchId)
        const customerId = input.customer_id ?? null
        if (customerId !== null) yield* customers.checkPayer(customerId, key)
        const merchant = yield* merchantFor(key)
        yield* limits.requirePaymentRoom(key.storeId, key.livemode, reads.liveCountOfOrganization)
        const createdAt = yield* currentDate
        const expiresAt = addMillis(createdAt, (input.expires_in ?? config.paymentDefaultExpirySeconds) * 1000)
        const qr = yield* buildKhqr({
          ...merchant,
          currency: input.currency,
          amountMinor: amount,
          billNumber: input.reference_id?.slice(0, BILL_NUMBER_LENGTH),
          createdAt,
          expiresAt
        }).pipe(
          Effect.mapError((invalid) =>
            invalid.toInvalidRequest(
              invalid.field === "billNumber" ? "reference_id" : invalid.field === "amountMinor" ? "amount" : undefined
            )
          )
        )
        const payment = {
          id: newId("pay"),
          storeId: key.storeId,
          branchId,
          customerId,
          livemode: key.livemode,
          amount,
          currency: input.currency,
          referenceId: input.reference_id ?? null,
          description: input.description ?? null,
          metadata: input.metadata ?? {},
          provider: key.livemode ? "bakong" : "mock",
          qrPayload: qr.payload,
          qrMd5: qr.md5,
          expiresAt,
          createdAt
        }
        // The branch is marked in the payment's transaction, so a branch with payments is never deleted
        // (DELETE deactivates it), even when the delete and this payment race.
        const row = branchId === null ? yield* repo.insert(payment) : yield* repo.inTransaction(
          Effect.gen(function*() {
            if (!(yield* stores.markBranchHasHistory(branchId))) return yield* unknownBranch(branchId)
            return yield* repo.insert(payment)
          })
        )
        // Announced and counted once inserted: an enclosing transaction (a payment link's) holds the
        // notice until it commits, and rolls back only on a defect.
        yield* announcePaymentChange(changeFeed, row)
        yield* recordPaymentTransition({ from: "none", to: row.status, livemode: row.livemode })
        return yield* view(row)
      })

    const create = traced("Payments.create")(function*(input: CreatePayment, idempotencyKey: string | undefined) {
      return yield* access.withApiKey((key) =>
        idempotency.once(
          scopeOf(key, idempotencyKey),
          { operation: "payments.create", input },
          201,
          encodePayment,
          () => createFor(key, input)
        )
      )
    })

    /**
     * The console's test payment: a user who may write the store's payments creates one in test mode, under
     * the rules of `create` and with its Idempotency-Key semantics (the key is the store's test mode's).
     */
    const createTest = traced("Payments.createTest")(function*(
      storeId: StoreId,
      input: CreatePayment,
      idempotencyKey: string | undefined
    ) {
      const owner = { storeId, livemode: false }
      return yield* storeMode(storeId, false, "payment.write", () =>
        idempotency.once(
          scopeOf(owner, idempotencyKey),
          { operation: "payments.create", input },
          201,
          encodePayment,
          () => createFor(owner, input)
        ))
    })

    const retrieve = traced("Payments.retrieve")(function*(id: PaymentId) {
      return yield* accessiblePayment(id, "payment.read", view)
    })

    /** A page of a store's payments of one mode, newest first; the caller has authorized the store. */
    const pageOf = (storeId: StoreId, livemode: boolean, params: PaymentListParams) =>
      Effect.gen(function*() {
        const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
        const filters = {
          status: params.status,
          referenceId: params.reference_id,
          customerId: params.customer_id,
          createdFrom: yield* parseTimestamp(params["created[gte]"], "created[gte]"),
          createdTo: yield* parseTimestamp(params["created[lte]"], "created[lte]")
        }
        const rows = yield* repo.list(storeId, livemode, filters, params.limit, position)
        const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
        const baseUrl = yield* publicUrl.get
        return new PaymentList({ ...page, data: page.data.map((row) => toPayment(row, baseUrl)) }, DECODED_ALREADY)
      })

    /**
     * `GET /v1/payments`: an API key lists its own store and mode (`store_id` and `livemode` may only
     * repeat them); a session token, like the other reads, any store the user may read, named by
     * `store_id`, in test mode unless `livemode=true`.
     */
    const list = traced("Payments.list")(function*(params: PaymentListParams) {
      const principal = yield* CurrentPrincipal
      if (principal._tag === "ApiKey") {
        const storeId = params.store_id ?? principal.storeId
        const livemode = params.livemode ?? principal.livemode
        return yield* storeMode(storeId, livemode, "payment.read", () => pageOf(storeId, livemode, params))
      }
      if (params.store_id === undefined) {
        return yield* new InvalidRequest({
          message: "store_id is required with a session token: the store whose payments to list",
          param: "store_id"
        })
      }
      return yield* listForStore(params.store_id, params.livemode ?? false, params)
    })

    /** The console's list: the payments of a store the caller may read, in one mode. */
    const listForStore = traced("Payments.listForStore")(function*(
      storeId: StoreId,
      livemode: boolean,
      params: PaymentListParams
    ) {
      return yield* storeMode(storeId, livemode, "payment.read", () => pageOf(storeId, livemode, params))
    })

    /** A store's payments of one mode in figures (PaymentsRepo.summary). */
    const summary = traced("Payments.summary")(function*(storeId: StoreId, livemode: boolean) {
      const rows = yield* storeMode(storeId, livemode, "payment.read", () => repo.summary(storeId, livemode))
      const byStatus = Object.fromEntries(PaymentStatus.literals.map((status) => [status, 0])) as Record<PaymentStatus, number>
      const volume: { [C in Currency]?: { readonly paid: string; readonly refunded: string } } = {}
      let total = 0
      let lastPaidAt: Date | null = null
      for (const row of rows) {
        if (row.status !== null) byStatus[row.status] = row.count
        else if (row.currency !== null) {
          volume[row.currency] = {
            paid: formatAmount(row.paid, row.currency),
            refunded: formatAmount(row.refunded, row.currency)
          }
        } else {
          total = row.count
          lastPaidAt = row.last_paid_at
        }
      }
      return new StoreSummary({
        store_id: storeId,
        livemode,
        payments: { total, by_status: byStatus },
        volume,
        last_payment_at: lastPaidAt?.toISOString() ?? null
      })
    })

    /**
     * The live payments of a store in one mode (domain/Console.ts `PaymentFeed`): a `PaymentFeedSynced`
     * once subscribed, then each change, for PAYMENT_FEED_LIFETIME.
     */
    const feed = traced("Payments.feed")(function*(storeId: StoreId, livemode: boolean) {
      yield* storeMode(storeId, livemode, "payment.read", () => Effect.void)
      const frames = Stream.unwrapScoped(Effect.map(
        subscribePaymentChanges(changeFeed, ofStore(storeId, livemode)),
        (notices) =>
          Stream.concat(
            Stream.make(new PaymentFeedSynced({ reason: "subscribed" })),
            Stream.map(notices, (notice) =>
              notice._tag === "Resync"
                ? new PaymentFeedSynced({ reason: "reconnected" })
                : new PaymentChanged({
                  id: notice.change.id,
                  status: notice.change.status,
                  amount: notice.change.amount,
                  currency: notice.change.currency,
                  amount_refunded: notice.change.amount_refunded,
                  version: notice.change.version
                }))
          )
      ))
      return Stream.interruptWhen(frames, Effect.sleep(PAYMENT_FEED_LIFETIME))
    })

    /** Sends one lifecycle change to the payment's entity and answers the payment as it is after it. */
    const applyTransition = (id: PaymentId, action: PaymentAction, requestKey: string) =>
      entity(id).Transition({ action, requestKey }).pipe(
        Effect.catchTags({
          // Mailbox full, persistence trouble: the infrastructure failed, not the client.
          MailboxFull: Effect.die,
          AlreadyProcessingMessage: Effect.die,
          PersistenceError: Effect.die
        }),
        Effect.flatMap(view)
      )

    const cancel = traced("Payments.cancel")(function*(id: PaymentId) {
      return yield* accessiblePayment(id, "payment.write", () => applyTransition(id, "cancel", randomUUID()))
    })

    const simulate = traced("Payments.simulate")(function*(
      id: PaymentId,
      status: "scanned" | "paid" | "failed" | "expired"
    ) {
      const key = yield* access.currentApiKey
      if (key.livemode) {
        return yield* new Forbidden({ message: "Simulate works with test-mode keys only" })
      }
      return yield* accessiblePayment(id, "payment.write", () => applyTransition(id, simulateActions[status], randomUUID()))
    })

    /** `simulate` for a user of the console: any test-mode payment of a store they may write. */
    const simulateTest = traced("Payments.simulateTest")(function*(
      id: PaymentId,
      status: "scanned" | "paid" | "failed" | "expired"
    ) {
      return yield* accessiblePayment(id, "payment.write", (payment) =>
        Effect.zipRight(
          payment.livemode ? Effect.fail(new Forbidden({ message: "Only test-mode payments can be simulated" })) : Effect.void,
          applyTransition(id, simulateActions[status], randomUUID())
        ))
    })

    const highValueRefused = (currency: Currency, threshold: string) =>
      new Forbidden({
        message: `Refunds totalling ${threshold} ${currency} or more on one payment need an Owner session with MFA; ` +
          "API keys cannot make them"
      })

    /**
     * A refund that brings the payment's refunded total to the threshold or above needs an Owner session
     * with MFA and a fresh code; an API key or another role is refused before anything is sent to the
     * payment. The total, not the single refund, is what counts: otherwise two refunds just below the
     * threshold would move as much money as one above it, with no MFA at all.
     *
     * Answers the refunded total the refund may not reach without that clearance (None once cleared, or
     * with no threshold): the entity checks it again against the total at the moment it applies the
     * refund, so refunds racing each other cannot pass the gate together either.
     */
    const authorizeHighValue = (payment: PaymentRow, amount: bigint, mfaCode: string | undefined) =>
      Effect.gen(function*() {
        const threshold = config.refundMfaThreshold
        if (Option.isNone(threshold)) return Option.none<bigint>()
        const limit = thresholdInMinorUnits(threshold.value, payment.currency)
        if (payment.amount_refunded + amount < limit) return Option.some(limit)
        const principal = yield* CurrentPrincipal
        if (principal._tag !== "User") return yield* highValueRefused(payment.currency, threshold.value)
        yield* access.store(payment.store_id, "payment.refund.high_value")
        yield* accounts.requireFreshMfa(principal.userId, mfaCode)
        return Option.none<bigint>()
      })

    /** The entity found the total past the clearance an earlier refund's race left this one with. */
    const refusedByRunningTotal = (refused: Forbidden): Effect.Effect<never, Forbidden | MfaRequired, CurrentPrincipal> =>
      Effect.flatMap(CurrentPrincipal, (principal): Effect.Effect<never, Forbidden | MfaRequired> =>
        principal._tag === "User"
          ? Effect.fail(
            new MfaRequired({
              message: "Another refund brought this payment's refunded total to the MFA threshold: send a fresh mfa_code",
              param: "mfa_code"
            })
          )
          : Effect.fail(refused))

    /**
     * What a refund needs before it is sent: the payment (authorized by the caller), the amount asked for
     * and, for a large one, the caller's clearance; then the idempotency scope, the request's fingerprint
     * and the operation itself.
     */
    const prepareRefund = (payment: PaymentRow, input: CreateRefund, idempotencyKey: string | undefined) =>
      Effect.gen(function*() {
        const id = payment.id
        const requested = input.amount === undefined ? null : yield* parseAmount(input.amount, payment.currency)
        if (requested === 0n) return yield* new InvalidRequest({ message: "amount must be greater than zero", param: "amount" })
        const refundedTotalLimit = yield* authorizeHighValue(
          payment,
          requested ?? payment.amount - payment.amount_refunded,
          input.mfa_code
        )
        const scope = idempotencyKey === undefined
          ? undefined
          : { storeId: payment.store_id, livemode: payment.livemode, key: idempotencyKey }
        const fingerprintBody = { payment_id: id, amount: input.amount ?? null, reason: input.reason ?? null }
        return {
          scope,
          request: { operation: "payments.refund", input: fingerprintBody },
          // The refund message is keyed by the request: a retry that takes over a crashed attempt sends the
          // same message again and gets the one refund.
          operation: (requestToken: string) =>
            entity(id).Refund({
              requestKey: requestToken,
              refundId: newId("re"),
              amount: requested,
              reason: input.reason ?? null,
              refundedTotalBelow: Option.getOrNull(refundedTotalLimit)
            }).pipe(
              Effect.catchTags({
                MailboxFull: Effect.die,
                AlreadyProcessingMessage: Effect.die,
                PersistenceError: Effect.die,
                Forbidden: refusedByRunningTotal
              }),
              Effect.map(({ refund }) => toRefund(refund))
            )
        }
      })

    /**
     * Refunds a payment, once per Idempotency-Key: the REST route and the console RPC share keys, and each
     * turns a `Replayed` outcome into what it answers.
     */
    const refund = traced("Payments.refund")(function*(
      id: PaymentId,
      input: CreateRefund,
      idempotencyKey: string | undefined
    ) {
      return yield* accessiblePayment(id, "payment.refund", (payment) =>
        Effect.flatMap(
          prepareRefund(payment, input, idempotencyKey),
          (prepared) => idempotency.once(prepared.scope, prepared.request, 201, encodeRefund, prepared.operation)
        ))
    })

    const refunds = traced("Payments.refunds")(function*(id: PaymentId, params: ListParams) {
      const rows = yield* accessiblePayment(id, "payment.read", () =>
        Effect.flatMap(
          params.cursor === undefined ? Effect.succeed(undefined) : decodeCursor(params.cursor),
          (position) => repo.listRefunds(id, params.limit, position)
        ))
      const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
      return new RefundList({ ...page, data: page.data.map(toRefund) }, DECODED_ALREADY)
    })

    return {
      create,
      createTest,
      createFor,
      retrieve,
      list,
      listForStore,
      summary,
      feed,
      cancel,
      simulate,
      simulateTest,
      refund,
      refunds,
      applyTransition
    } as const
  }),
  dependencies: [
    PaymentsRepo.Default,
    StoresService.Default,
    StorePaymentSettings.Default,
    CustomersService.Default,
    AccessService.Default,
    AccountsService.Default,
    Idempotency.Default,
    PlanLimits.Default,
    PaymentReads.Default
  ]
}) {}
