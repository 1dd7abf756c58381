/**
 * The CustomerWallet entity: every change of one customer's points — earn, reverse, redeem, cancel a
 * redemption, adjust, and the credits of other programs — is a message to the entity of that customer's
 * id, so changes to one wallet are applied one at a time however many requests race, and a balance never
 * goes negative. Each message has a key (the payment, the refund event, the request's Idempotency-Key or
 * a fresh token): a retry, or a replay after a crash, is answered once.
 *
 * The changes waiting for a wallet are applied together, in one SQL transaction (the wallet's queue,
 * below): for each, the balance, the points entry (and the redemption and its stock) and the outbox event,
 * all committing together or not at all. Every entry carries the key of the message that made it (unique
 * per customer), so a message sent again — a caller's retry, an outbox consumer's next pass, the cluster's
 * resend to the wallet's next runner when the one it went to died — finds its own entry and answers with
 * it instead of applying again. That key is what makes a change once, so the messages are not also stored
 * in the cluster's message table (which cost five statements per change: the message, and the reply's
 * transaction); a change whose request died with its runner was never answered, and whoever sent it (a
 * client with its Idempotency-Key, an outbox consumer whose event stays queued) sends it again.
 */
import { ClusterSchema, Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Array as Arr, Cause, Deferred, Effect, Exit, Option, Schema } from "effect"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import { CustomerId, EventId, PaymentId, RedemptionId, RewardId, StoreId } from "../../domain/Ids.ts"
import { MAX_POINTS, PointsEntry, type PointsEntryType, Redemption } from "../../domain/Loyalty.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { makeEntityQueue, type Pending } from "../platform/EntityQueue.ts"
import { newId } from "../platform/Ids.ts"
import { currentDate } from "../platform/Time.ts"
import { Outbox, type OutboxEventInput } from "../platform/Outbox.ts"
import { pointsFor, reversalFor } from "./Points.ts"
import { LoyaltyRepo, PointsEntryRow, POINTS_CHANNEL, ProgramRow, RedemptionRow, TierRow, type WalletRow } from "./Repo.ts"
import { newVoucherCode } from "../platform/Voucher.ts"
import { Currency } from "../platform/Money.ts"
import { tierOf, toPointsEntry, toRedemption } from "./View.ts"

/** A points entry as messages carry it: the row, with its date encoded for storage. */
export const PointsEntryState = Schema.Struct({ ...PointsEntryRow.fields, created_at: Schema.Date })
export const RedemptionState = Schema.Struct({
  ...RedemptionRow.fields,
  created_at: Schema.Date,
  fulfilled_at: Schema.NullOr(Schema.Date),
  cancelled_at: Schema.NullOr(Schema.Date)
})

/** What earning reads of a store: its program and its tiers (dates encoded for the message). */
export const EarningRules = Schema.Struct({
  program: ProgramRow,
  tiers: Schema.Array(Schema.Struct({ ...TierRow.fields, created_at: Schema.Date }))
})
export type EarningRules = typeof EarningRules.Type

/** What earning needs of a paid payment: its store, its amount in minor units and its currency. */
export const PaidPayment = Schema.Struct({ store_id: StoreId, amount: Schema.BigInt, currency: Currency })
export type PaidPayment = typeof PaidPayment.Type

/** The credits other programs send (referrals, promotions, games). */
export const CreditTypes = ["referral", "promotion", "game"] as const

const WalletPoints = Schema.Int.pipe(Schema.between(-MAX_POINTS, MAX_POINTS))

/**
 * Messages uninterruptible, for the reason the payment entity's are (src/payments/Entity.ts): a caller
 * that stops waiting does not stop the change it asked for.
 */
export const CustomerWalletEntity = Entity.make("CustomerWallet", [
  Rpc.make("Earn", {
    payload: {
      paymentId: PaymentId,
      /**
       * The store's program and tiers as the loyalty consumer read them, once per pass for all its events
       * (src/loyalty/Jobs.ts); without them the entity reads them itself.
       */
      rules: Schema.optional(EarningRules),
      /**
       * The payment as its `payment.completed` event holds it (src/loyalty/Jobs.ts); without it the entity
       * reads the payment, and earns nothing if it is not this customer's or not paid.
       */
      paid: Schema.optional(PaidPayment)
    },
    success: Schema.NullOr(PointsEntryState),
    primaryKey: (payload) => `earn:${payload.paymentId}`
  }),
  Rpc.make("Reverse", {
    payload: { paymentId: PaymentId, eventId: EventId },
    success: Schema.NullOr(PointsEntryState),
    primaryKey: (payload) => `reverse:${payload.eventId}`
  }),
  Rpc.make("Redeem", {
    payload: {
      requestKey: Schema.String,
      redemptionId: RedemptionId,
      rewardId: Schema.NullOr(RewardId),
      /** Raw points to redeem; null for a reward (its cost is read under the wallet's lock). */
      points: Schema.NullOr(WalletPoints),
      reason: Schema.NullOr(Schema.String)
    },
    success: RedemptionState,
    error: Schema.Union(InvalidState, NotFound),
    primaryKey: (payload) => `redeem:${payload.requestKey}`
  }),
  Rpc.make("CancelRedemption", {
    payload: { redemptionId: RedemptionId, requestKey: Schema.String },
    success: RedemptionState,
    error: Schema.Union(InvalidState, NotFound),
    primaryKey: (payload) => `cancel:${payload.requestKey}`
  }),
  Rpc.make("Adjust", {
    payload: { requestKey: Schema.String, points: WalletPoints, reason: Schema.String },
    success: PointsEntryState,
    error: Schema.Union(InvalidState, NotFound),
    primaryKey: (payload) => `adjust:${payload.requestKey}`
  }),
  Rpc.make("Credit", {
    payload: {
      type: Schema.Literal(...CreditTypes),
      key: Schema.String,
      points: Schema.Int.pipe(Schema.between(1, MAX_POINTS)),
      reason: Schema.NullOr(Schema.String)
    },
    success: PointsEntryState,
    error: Schema.Union(InvalidState, NotFound),
    primaryKey: (payload) => `credit:${payload.type}:${payload.key}`
  })
]).annotateRpcs(ClusterSchema.Uninterruptible, true)

const encodeEntry = Schema.encodeSync(PointsEntry)
const encodeRedemption = Schema.encodeSync(Redemption)

type Refusal = InvalidState | NotFound

/**
 * One change of the wallet, as its queue applies it: `apply` on the wallet as the changes before it left
 * it, unless its `key` made an entry already, whose entry `replayed` answers with. `inMemory`: `apply`
 * reads nothing and writes nothing but its entries and events (earning, adjusting, crediting), so a pass
 * of such changes needs no lock (see `applyUnlocked`).
 */
interface WalletChange<A, E> {
  readonly key: string | null
  readonly replayed: (entry: PointsEntryRow) => Effect.Effect<A, E>
  readonly apply: (wallet: WalletRow) => Effect.Effect<A, E>
  readonly inMemory: boolean
}

/** What a change adds to a wallet: signed points, and what the lifetime total gains (earning only). */
interface Change {
  readonly type: PointsEntryType
  readonly points: number
  readonly lifetime: number
  readonly key: string
  readonly shortfall?: number
  readonly paymentId?: PaymentId | null
  readonly redemptionId?: RedemptionId | null
  readonly reason?: string | null
}

export const CustomerWalletEntityLive = CustomerWalletEntity.toLayer(
  Effect.gen(function*() {
    const repo = yield* LoyaltyRepo
    const outbox = yield* Outbox
    const changeFeed = yield* ChangeFeed
    // The cluster addresses the entity by the customer's id: the one string here that arrives unbranded.
    const customerId = CustomerId.make((yield* Entity.CurrentAddress).entityId)

    const notFound = () => new NotFound({ message: `No such customer: ${customerId}`, param: "customer_id" })

    const tooFew = (wallet: WalletRow, needed: number) =>
      new InvalidState({
        message: `Not enough points: the balance is ${wallet.points_balance}, this needs ${needed}`,
        param: "points"
      })

    /**
     * The pass of the wallet's queue being applied: the wallet as the changes so far left it, and what they
     * wrote, held back and sent in a few statements when the pass ends (or before a change reads what they
     * write). Only the queue's one fiber runs a pass, so one variable holds it.
     */
    interface Pass {
      wallet: WalletRow
      readonly keys: Set<string>
      entries: Array<PointsEntryRow>
      notices: Array<string>
      redemptions: Array<RedemptionRow>
      events: Array<OutboxEventInput>
    }
    let current: Pass | undefined
    const thePass = Effect.suspend(() =>
      current === undefined ? Effect.dieMessage(`wallet ${customerId}: a change ran outside its queue's pass`) : Effect.succeed(current)
    )

    /**
     * The wallet as the last pass left it, while no pass failed since; undefined when not known. A pass of
     * in-memory changes starts from it instead of reading the wallet.
     */
    let known: WalletRow | undefined

    /**
     * Tells every process's wallet feeds of the entries (`notices`, encoded) once they commit; each notice
     * stays well under PostgreSQL's 8000-byte payload limit (an entry's free text is at most 500 characters).
     */
    const announceEntries = (notices: ReadonlyArray<string>) =>
      changeFeed.announceAll(POINTS_CHANNEL, notices)

    /** Sends what the pass holds back: its redemptions, its entries with the balance they leave, its events. */
    const flush = Effect.gen(function*() {
      const pass = yield* thePass
      const { entries, events, notices, redemptions } = pass
      pass.entries = []
      pass.notices = []
      pass.redemptions = []
      pass.events = []
      if (Arr.isNonEmptyReadonlyArray(redemptions)) yield* repo.insertRedemptions(redemptions)
      if (Arr.isNonEmptyReadonlyArray(entries)) {
        yield* repo.postEntries({
          customerId,
          balance: pass.wallet.points_balance,
          lifetime: pass.wallet.lifetime_points,
          entries
        })
        yield* announceEntries(notices)
      }
      if (events.length > 0) yield* outbox.emitMany(events)
    })

    /** Applies a change to the wallet (locked by the pass): the new balance and its entry, sent with the pass. */
    const post = (wallet: WalletRow, change: Change) =>
      Effect.gen(function*() {
        const pass = yield* thePass
        const balance = wallet.points_balance + change.points
        if (balance < 0) return yield* tooFew(wallet, -change.points)
        if (balance > MAX_POINTS) {
          return yield* new InvalidState({ message: `A balance cannot pass ${MAX_POINTS} points`, param: "points" })
        }
        const lifetime = Math.min(MAX_POINTS, Math.max(0, wallet.lifetime_points + change.lifetime))
        const entry: PointsEntryRow = {
          id: newId("lpe"),
          customer_id: wallet.id,
          store_id: wallet.store_id,
          livemode: wallet.livemode,
          type: change.type,
          points: change.points,
          balance_after: balance,
          shortfall: change.shortfall ?? 0,
          payment_id: change.paymentId ?? null,
          redemption_id: change.redemptionId ?? null,
          reason: change.reason ?? null,
          entry_key: change.key,
          created_at: yield* currentDate
        }
        pass.entries.push(entry)
        pass.notices.push(JSON.stringify(encodeEntry(toPointsEntry(entry))))
        pass.keys.add(change.key)
        pass.wallet = { ...pass.wallet, points_balance: balance, lifetime_points: lifetime }
        return entry
      })

    /** Records a redemption, sent with the pass. */
    const record = (redemption: RedemptionRow) =>
      Effect.map(thePass, (pass) => {
        pass.redemptions.push(redemption)
        return redemption
      })

    const announce = (wallet: WalletRow, type: string, object: PointsEntry | Redemption, at: Date) =>
      Effect.map(thePass, (pass) => {
        pass.events.push({
          storeId: wallet.store_id,
          livemode: wallet.livemode,
          type,
          object: object instanceof PointsEntry ? encodeEntry(object) : encodeRedemption(object),
          at
        })
      })

    /**
     * A change keyed `key`: `apply` runs on the wallet unless the key made an entry already (in an earlier
     * pass, or earlier in this one), whose entry then answers through `replayed`.
     */
    const once = <A, E extends Refusal>(
      key: string,
      replayed: (entry: PointsEntryRow) => Effect.Effect<A, E>,
      apply: (wallet: WalletRow) => Effect.Effect<A, E>,
      inMemory = false
    ): WalletChange<A, E> => ({ key, replayed, apply, inMemory })

    /** A payment of this customer's, paid: what earning and reversing read. */
    const paidPayment = (paymentId: PaymentId) =>
      Effect.map(repo.findPayment(paymentId), Option.filter((payment) => payment.customer_id === customerId && payment.paid_at !== null))

    /**
     * The payment, the program and its tiers are read before the wallet is locked: none of them changes
     * with the wallet, so its lock is held only for its own round trips (the program as it is a moment
     * earlier is as good as at the lock: the two were never ordered).
     */
    const earn = (
      paymentId: PaymentId,
      paid: PaidPayment | undefined,
      rules: EarningRules | undefined,
      queued: <A, E extends Refusal>(change: WalletChange<A, E>) => Effect.Effect<A, E>
    ) =>
      Effect.gen(function*() {
        const payment = paid === undefined ? yield* paidPayment(paymentId) : Option.some(paid)
        if (Option.isNone(payment)) return null
        const storeId = payment.value.store_id
        const { program, tiers } = rules !== undefined && rules.program.store_id === storeId
          ? rules
          : yield* Effect.all({ program: repo.program(storeId), tiers: repo.tiersOf(storeId) }, { concurrency: 2 })
        return yield* queued(once(`earn:${paymentId}`, Effect.succeed, (wallet) =>
          Effect.gen(function*() {
            if (!program.active) return null
            const tier = tierOf(tiers, wallet.lifetime_points).current
            const rate = payment.value.currency === "USD" ? program.points_per_usd : program.points_per_khr
            const computed = pointsFor(payment.value.amount, payment.value.currency, rate, tier?.earn_multiplier ?? "1")
            // A balance is a database integer: what would pass its maximum is not credited.
            const points = Number(computed > BigInt(MAX_POINTS - wallet.points_balance)
              ? BigInt(MAX_POINTS - wallet.points_balance)
              : computed)
            if (points <= 0) return null
            const entry = yield* post(wallet, { type: "earn", points, lifetime: points, key: `earn:${paymentId}`, paymentId })
            yield* announce(wallet, "loyalty.points_earned", toPointsEntry(entry), entry.created_at)
            return entry
          }), true))
      }).pipe(Effect.orDie)

    /**
     * Takes back the share of the payment's earned points that its refunds (all of them so far) are of
     * its amount, less what earlier refunds took back: a refund of half takes back half. What the balance
     * no longer holds (already spent) is recorded as the entry's shortfall, never as a negative balance.
     */
    const reverse = (paymentId: PaymentId, eventId: EventId) =>
      once(`reverse:${eventId}`, Effect.succeed, (wallet) =>
        Effect.gen(function*() {
          const payment = yield* paidPayment(paymentId)
          if (Option.isNone(payment)) return null
          // What the payment earned and lost so far may be among what this pass holds back.
          yield* flush
          const sofar = yield* repo.paymentPoints({ customerId, paymentId })
          const due = reversalFor(sofar.earned, payment.value.amount_refunded, payment.value.amount) - sofar.reversed
          if (due <= 0) return null
          const taken = Math.min(due, wallet.points_balance)
          return yield* post(wallet, {
            type: "reverse",
            points: -taken,
            lifetime: -due,
            shortfall: due - taken,
            key: `reverse:${eventId}`,
            paymentId
          })
        }).pipe(Effect.orDie))

    const redeem = (input: {
      readonly requestKey: string
      readonly redemptionId: RedemptionId
      readonly rewardId: RewardId | null
      readonly points: number | null
      readonly reason: string | null
    }) =>
      once(
        `redeem:${input.requestKey}`,
        (entry) =>
          Effect.flatMap(
            repo.findRedemption(entry.redemption_id!),
            Option.match({ onNone: () => Effect.dieMessage("a redemption entry without its redemption"), onSome: Effect.succeed })
          ),
        (wallet) =>
          Effect.gen(function*() {
            let cost = input.points ?? 0
            if (input.rewardId !== null) {
              const reward = Option.filter(yield* repo.findReward(input.rewardId), (row) => row.store_id === wallet.store_id)
              if (Option.isNone(reward)) {
                return yield* new NotFound({ message: `No such reward: ${input.rewardId}`, param: "reward_id" })
              }
              if (!reward.value.active) {
                return yield* new InvalidState({ message: `Reward ${input.rewardId} is deactivated`, param: "reward_id" })
              }
              cost = reward.value.points_cost
            }
            if (wallet.points_balance < cost) return yield* tooFew(wallet, cost)
            if (input.rewardId !== null && Option.isNone(yield* repo.takeStock(input.rewardId))) {
              return yield* new InvalidState({ message: `Reward ${input.rewardId} is out of stock`, param: "reward_id" })
            }
            const at = yield* currentDate
            const redemption = yield* record({
              id: input.redemptionId,
              store_id: wallet.store_id,
              livemode: wallet.livemode,
              customer_id: wallet.id,
              reward_id: input.rewardId,
              points: cost,
              status: "issued",
              voucher_code: newVoucherCode(),
              reason: input.reason,
              cancel_key: null,
              created_at: at,
              fulfilled_at: null,
              cancelled_at: null
            })
            yield* post(wallet, {
              type: "redeem",
              points: -cost,
              lifetime: 0,
              key: `redeem:${input.requestKey}`,
              redemptionId: redemption.id,
              reason: input.reason
            })
            yield* announce(wallet, "loyalty.redemption.created", toRedemption(redemption), at)
            return redemption
          })
      )

    /**
     * Cancels an issued redemption of this customer: its points come back as one `redeem_cancel` entry
     * (keyed by the redemption, so they come back once whatever is replayed) and its unit to the stock.
     */
    const cancel = (redemptionId: RedemptionId, requestKey: string): WalletChange<RedemptionRow, Refusal> => ({
      key: null,
      inMemory: false,
      replayed: () => Effect.dieMessage("a cancellation has no key of its own to be replayed by"),
      apply: (wallet) => cancelOf(wallet, redemptionId, requestKey)
    })

    const cancelOf = (wallet: WalletRow, redemptionId: RedemptionId, requestKey: string) =>
      Effect.gen(function*() {
        // The redemption may be among what this pass holds back.
        yield* flush
        const found = Option.filter(yield* repo.findRedemptionForUpdate(redemptionId), (row) => row.customer_id === customerId)
        if (Option.isNone(found)) return yield* new NotFound({ message: `No such redemption: ${redemptionId}`, param: "id" })
        const redemption = found.value
        // This very message cancelled it before its reply was stored: answer the same.
        if (redemption.status === "cancelled" && redemption.cancel_key === requestKey) return redemption
        if (redemption.status !== "issued") {
          return yield* new InvalidState({
            message: `Redemption ${redemptionId} is ${redemption.status}: only an issued redemption can be cancelled`,
            param: "id"
          })
        }
        // Refused before anything is written (every message of the wallet refuses before it writes: see the queue).
        if (wallet.points_balance + redemption.points > MAX_POINTS) {
          return yield* new InvalidState({ message: `A balance cannot pass ${MAX_POINTS} points`, param: "points" })
        }
        const at = yield* currentDate
        const cancelled = yield* repo.markCancelled({ id: redemptionId, key: requestKey, at })
        if (redemption.reward_id !== null) yield* repo.returnStock(redemption.reward_id)
        yield* post(wallet, {
          type: "redeem_cancel",
          points: redemption.points,
          lifetime: 0,
          key: `cancel:${redemptionId}`,
          redemptionId
        })
        yield* announce(wallet, "loyalty.redemption.cancelled", toRedemption(cancelled), at)
        return cancelled
      })

    const adjust = (requestKey: string, points: number, reason: string) =>
      once(`adjust:${requestKey}`, Effect.succeed, (wallet) =>
        post(wallet, { type: "adjust", points, lifetime: 0, key: `adjust:${requestKey}`, reason }), true)

    const credit = (type: (typeof CreditTypes)[number], key: string, points: number, reason: string | null) =>
      once(`credit:${type}:${key}`, Effect.succeed, (wallet) =>
        post(wallet, { type, points, lifetime: points, key: `credit:${type}:${key}`, reason }), true)

    /** Answers a change that was applied before: the entry its key made (sent now if this pass holds it). */
    const replay = (change: WalletChange<unknown, Refusal>, key: string) =>
      Effect.gen(function*() {
        yield* flush
        const earlier = yield* repo.findEntryByKey({ customerId, key })
        if (Option.isNone(earlier)) return yield* Effect.dieMessage(`the entry of ${key} cannot be read`)
        return yield* change.replayed(earlier.value)
      })

    /** A pass of the wallet's queue starting from `wallet`, made the current one. */
    const startPass = (wallet: WalletRow): Pass => {
      current = { wallet, keys: new Set(), entries: [], notices: [], redemptions: [], events: [] }
      return current
    }

    /**
     * Each change of a pass in turn through `run`, with its answer: a refusal is that change's answer and the
     * others go on (every change refuses before it writes anything); any other failure fails the pass.
     */
    const eachChange = (
      changes: ReadonlyArray<WalletChange<unknown, Refusal>>,
      run: (change: WalletChange<unknown, Refusal>) => Effect.Effect<unknown, Refusal>
    ) =>
      Effect.gen(function*() {
        const exits: Array<Exit.Exit<unknown, Refusal>> = []
        for (const change of changes) {
          const exit = yield* Effect.exit(run(change))
          if (Exit.isFailure(exit) && !Cause.isFailType(exit.cause)) return yield* Effect.failCause(exit.cause)
          exits.push(exit)
        }
        return exits
      })

    /**
     * One transaction for the changes of a pass: the wallet locked with the keys already applied, each
     * change in turn against the balance the ones before it left, and what they wrote sent at the end. A
     * refusal is that change's answer and the others go on, which is sound because every change here refuses
     * before it writes anything; any other failure rolls the whole pass back.
     */
    const applyTogether = (changes: ReadonlyArray<WalletChange<unknown, Refusal>>) =>
      repo.inTransaction(Effect.gen(function*() {
        known = undefined
        const keys = changes.flatMap((change) => (change.key === null ? [] : [change.key]))
        const locked = yield* repo.lockWalletWithKeys({ customerId, keys })
        if (Option.isNone(locked)) return { exits: changes.map(() => Exit.fail(notFound())), wallet: undefined }
        const { applied_keys, ...wallet } = locked.value
        const applied = new Set(applied_keys)
        const pass = startPass(wallet)
        const exits = yield* eachChange(changes, (change) => {
          const key = change.key
          return key !== null && (applied.has(key) || pass.keys.has(key)) ? replay(change, key) : change.apply(pass.wallet)
        })
        yield* flush
        return { exits, wallet: pass.wallet }
      })).pipe(
        Effect.map(({ exits, wallet }) => {
          known = wallet
          return exits
        }),
        Effect.ensuring(Effect.sync(() => {
          current = undefined
        }))
      )

    /**
     * A pass of in-memory changes (earning, adjusting, crediting; each key once) without a transaction:
     * the wallet as the last pass left it (read, unlocked, when not known), each change applied to it in
     * turn, and the balance, the entries, their notices and the events written in one statement that
     * matches only if the wallet is still as the pass found it (repo.postEntriesIfUnchanged). Two round
     * trips for a pass, one once the wallet is known, where the locked pass takes five or six: the
     * statement is atomic, and the wallet's columns it checks are all a change reads of it. It answers
     * undefined, having written nothing, when the wallet changed underneath (another writer: an erasure, a
     * runner that held the wallet before) or a key was applied already (its entry's key is unique): the
     * locked pass (`applyTogether`) then applies the same changes from what is there, and answers the
     * replayed ones with their entries.
     */
    const applyUnlocked = (changes: ReadonlyArray<WalletChange<unknown, Refusal>>) =>
      Effect.gen(function*() {
        const found = known === undefined ? yield* repo.findWallet(customerId) : Option.some(known)
        known = undefined
        if (Option.isNone(found)) return changes.map(() => Exit.fail(notFound()))
        const was = found.value
        const pass = startPass(was)
        const exits = yield* eachChange(changes, (change) => change.apply(pass.wallet))
        if (Arr.isNonEmptyReadonlyArray(pass.entries)) {
          const events = outbox.writtenWith(pass.events)
          const written = yield* repo.postEntriesIfUnchanged({
            customerId,
            was: { balance: was.points_balance, lifetime: was.lifetime_points, erased: was.erased_at !== null },
            balance: pass.wallet.points_balance,
            lifetime: pass.wallet.lifetime_points,
            entries: pass.entries,
            events
          })
          if (!written) return undefined
          yield* announceEntries(pass.notices)
          yield* events.announce
        }
        known = pass.wallet
        return exits
      }).pipe(Effect.ensuring(Effect.sync(() => {
        current = undefined
      })))

    /** Whether a pass of `changes` can go without the lock: in-memory changes only, no key twice. */
    const unlockable = (changes: ReadonlyArray<WalletChange<unknown, Refusal>>) => {
      const keys = new Set<string>()
      for (const change of changes) {
        if (!change.inMemory || change.key === null || keys.has(change.key)) return false
        keys.add(change.key)
      }
      return true
    }

    /** A pass: without the lock when it can (falling back to the lock when it could not), else locked. */
    const applyPass = (changes: ReadonlyArray<WalletChange<unknown, Refusal>>) =>
      unlockable(changes)
        ? Effect.flatMap(applyUnlocked(changes), (exits) => (exits === undefined ? applyTogether(changes) : Effect.succeed(exits)))
        : applyTogether(changes)

    /**
     * The wallet's queue (src/platform/EntityQueue.ts): what waits is applied together, as above. A pass
     * that fails is applied again one change at a time, so one change's defect is its own answer only.
     */
    const { submit } = yield* makeEntityQueue<WalletChange<unknown, Refusal>, unknown, Refusal>((waiting) => {
      const answerAll = (exits: ReadonlyArray<Exit.Exit<unknown, Refusal>>) =>
        Effect.forEach(waiting, (pending, index) => Deferred.done(pending.done, exits[index]!), { discard: true })
      const oneByOne = Effect.forEach(waiting, (pending) =>
        applyPass([pending.job]).pipe(
          Effect.exit,
          Effect.flatMap((exit) => Deferred.done(pending.done, Exit.isSuccess(exit) ? exit.value[0]! : Exit.failCause(exit.cause)))
        ), { discard: true })
      return applyPass(waiting.map((pending) => pending.job)).pipe(
        Effect.matchCauseEffect({
          onFailure: (cause) => (waiting.length === 1 ? Deferred.failCause(waiting[0].done, cause) : oneByOne),
          onSuccess: answerAll
        })
      )
    })
    /** Queues one change; its answer is the change's own (the queue holds changes of every type). */
    const queued = <A, E extends Refusal>(change: WalletChange<A, E>) =>
      submit(change as WalletChange<unknown, Refusal>) as Effect.Effect<A, E>

    return CustomerWalletEntity.of({
      Earn: ({ payload }) => earn(payload.paymentId, payload.paid, payload.rules, queued),
      Reverse: ({ payload }) => queued(reverse(payload.paymentId, payload.eventId)),
      Redeem: ({ payload }) => queued(redeem(payload)),
      CancelRedemption: ({ payload }) => queued(cancel(payload.redemptionId, payload.requestKey)),
      Adjust: ({ payload }) => queued(adjust(payload.requestKey, payload.points, payload.reason)),
      Credit: ({ payload }) => queued(credit(payload.type, payload.key, payload.points, payload.reason))
    })
  }),
  // Every waiting message is taken at once: the wallet's queue orders them.
  { maxIdleTime: "2 minutes", concurrency: "unbounded" }
)
