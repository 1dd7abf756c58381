/**
 * The rules of customers: who may see and change which customer, uniqueness of e-mail and external_id
 * per store and mode, preferences with their consent log, the customer 360, and erasure.
 *
 * The merchant API acts with an API key on its own store and mode only (any other customer is 404, as if
 * it did not exist); the console acts with a user session under the access policy (customer.read,
 * customer.write, customer.erase).
 */
import { Effect, Option, Schema } from "effect"
import type { Permission } from "../../domain/Access.ts"
import type { ApiKeyPrincipal } from "../../domain/Auth.ts"
import {
  ConsentEventList,
  type ConsentPurpose,
  ConsentPurposes,
  type CreateCustomer,
  Customer,
  CustomerList,
  type CustomerListParams,
  RECENT_PAYMENTS,
  type SetPreferences,
  type StoreCustomerListParams
} from "../../domain/Customers.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { CustomerId, StoreId } from "../../domain/Ids.ts"
import type { ConsentActorType } from "../../domain/Customers.ts"
import type { ListParams } from "../../domain/Lists.ts"
import { AccessService, storeData } from "../access/Service.ts"
import { PaymentReads } from "../payments/Reads.ts"
import { Idempotency, scopeOf } from "../platform/Idempotency.ts"
import { newId } from "../platform/Ids.ts"
import { pageAfter } from "../platform/Pagination.ts"
import { PublicLinks } from "../platform/PublicLinks.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { currentDate } from "../platform/Time.ts"
import { ReferralAttach } from "../referrals/Attach.ts"
import {
  type ConsentEventRow,
  type CustomerFilters,
  CustomersRepo,
  type CustomerRow,
  type NewCustomer,
  preferenceColumn,
  type PreferenceFlags
} from "./Repo.ts"
import { CustomerStandings } from "./Standings.ts"
import { toConsentEvent, toCustomer, toCustomer360, toPreferences } from "./View.ts"
import { traced } from "../platform/Traced.ts"

/** The store and mode a customer belongs to. */
export interface CustomerOwner {
  readonly storeId: string
  readonly livemode: boolean
}

/** Who changed a preference, for the consent log, and the source a change has when none is sent. */
interface ConsentAuthor {
  readonly type: ConsentActorType
  readonly id: string
  readonly defaultSource: string
}

/**
 * How often a create is tried again when its e-mail or external_id was taken by a customer that is
 * erased before the holder could be named: erasure frees the value, so the next try goes in.
 */
const CREATE_ATTEMPTS = 3

const flagsOf = (row: CustomerRow): PreferenceFlags => ({
  email: row[preferenceColumn.email],
  sms: row[preferenceColumn.sms],
  telegram: row[preferenceColumn.telegram],
  marketing: row[preferenceColumn.marketing]
})

export class CustomersService extends Effect.Service<CustomersService>()("customers/CustomersService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* CustomersRepo, "inTransaction")
    const payments = storeData(yield* PaymentReads)
    const access = yield* AccessService
    const idempotency = yield* Idempotency
    const publicUrl = yield* PublicBaseUrl
    const referrals = yield* ReferralAttach
    const publicLinks = yield* PublicLinks
    const standings = yield* CustomerStandings
    const encodeCustomer = Schema.encodeSync(Customer)

    const notFound = (id: string, param = "id") => new NotFound({ message: `No such customer: ${id}`, param })

    /** `use` on the customer `id` of the API key's own store and mode; any other customer does not exist. */
    const customerOfKey = <A, E, R>(id: CustomerId, use: (row: CustomerRow, key: ApiKeyPrincipal) => Effect.Effect<A, E, R>) =>
      access.withApiKey((key) =>
        Effect.flatMap(repo.find(id), (found): Effect.Effect<A, E | NotFound, R> =>
          Option.match(Option.filter(found, (row) => row.store_id === key.storeId && row.livemode === key.livemode), {
            onNone: () => Effect.fail(notFound(id)),
            onSome: (row) => use(row, key)
          })))

    /** `use` on the customer `id` if the signed-in user may do `permission` on its store; anything else is 404. */
    const customerOfUser = <A, E, R>(id: CustomerId, permission: Permission, use: (row: CustomerRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.find(id), (row) => row.store_id, permission, () => notFound(id), use)
      )

    // ---------------------------------------------------------------------------------------------
    // Create
    // ---------------------------------------------------------------------------------------------

    /** The 409 for a create whose e-mail or external_id is another customer's, naming that customer. */
    const taken = (input: CreateCustomer, owner: CustomerOwner) =>
      Effect.map(
        repo.findHolder({
          storeId: owner.storeId,
          livemode: owner.livemode,
          email: input.email ?? null,
          externalId: input.external_id ?? null
        }),
        Option.map(({ email_taken, id }) =>
          new InvalidState({
            message: email_taken
              ? `A customer with this email already exists: ${id}`
              : `A customer with this external_id already exists: ${id}`,
            param: email_taken ? "email" : "external_id"
          })
        )
      )

    const insertUnique = (customer: NewCustomer, input: CreateCustomer, owner: CustomerOwner) =>
      Effect.gen(function*() {
        for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
          const inserted = yield* repo.insert(customer)
          if (Option.isSome(inserted)) return inserted.value
          const conflict = yield* taken(input, owner)
          if (Option.isSome(conflict)) return yield* conflict.value
        }
        return yield* Effect.dieMessage("a customer insert kept conflicting with no customer holding its e-mail or external_id")
      })

    const createFor = (owner: CustomerOwner, input: CreateCustomer) =>
      Effect.gen(function*() {
        if (input.email === undefined && input.external_id === undefined) {
          return yield* new InvalidRequest({
            message: "Send email or external_id (or both): a customer needs one to be found again",
            param: "email"
          })
        }
        const referrer = input.referral_code === undefined
          ? undefined
          : yield* referrals.referrerOf(owner, input.referral_code)
        const createdAt = yield* currentDate
        const insert = insertUnique({
          id: newId("cus"),
          storeId: owner.storeId,
          livemode: owner.livemode,
          email: input.email ?? null,
          externalId: input.external_id ?? null,
          name: input.name ?? null,
          phone: input.phone ?? null,
          metadata: input.metadata ?? {},
          createdAt
        }, input, owner)
        // A referee and its referral commit together: no customer is left without the referral it asked for.
        const row = referrer === undefined
          ? yield* insert
          : yield* repo.inTransaction(Effect.tap(insert, (inserted) => referrals.attach(referrer, inserted)))
        return toCustomer(row, yield* publicLinks.urls)
      })

    const create = traced("Customers.create")(function*(input: CreateCustomer, idempotencyKey: string | undefined) {
      return yield* access.withApiKey((key) =>
        idempotency.once(
          scopeOf(key, idempotencyKey),
          { operation: "customers.create", input },
          201,
          encodeCustomer,
          () => createFor(key, input)
        )
      )
    })

    /**
     * A customer made from the console: the same rules as `POST /v1/customers`, in the store and mode the
     * user works in (customer.write); the console's Idempotency-Key shares the merchant API's keys of that
     * store and mode.
     */
    const createForStore = traced("Customers.createForStore")(function*(
      storeId: StoreId,
      livemode: boolean,
      input: CreateCustomer,
      idempotencyKey: string | undefined
    ) {
      yield* access.currentUser
      return yield* access.withStore(storeId, "customer.write", (store) => {
        const owner = { storeId: store.storeId, livemode }
        return idempotency.once(
          scopeOf(owner, idempotencyKey),
          { operation: "customers.create", input },
          201,
          encodeCustomer,
          () => createFor(owner, input)
        )
      })
    })

    // ---------------------------------------------------------------------------------------------
    // Reads
    // ---------------------------------------------------------------------------------------------

    const listPage = (owner: CustomerOwner, filters: CustomerFilters, params: ListParams) =>
      Effect.gen(function*() {
        const page = yield* pageAfter(params, (position) => repo.list(owner.storeId, owner.livemode, filters, params.limit, position))
        const links = yield* publicLinks.urls
        return new CustomerList({ ...page, data: page.data.map((row) => toCustomer(row, links)) })
      })

    const list = traced("Customers.list")(function*(params: CustomerListParams) {
      return yield* access.withApiKey((key) => listPage(key, { email: params.email, externalId: params.external_id }, params))
    })

    const retrieve = traced("Customers.retrieve")(function*(id: CustomerId) {
      const row = yield* customerOfKey(id, Effect.succeed)
      return toCustomer(row, yield* publicLinks.urls)
    })

    const preferences = traced("Customers.preferences")(function*(id: CustomerId) {
      return toPreferences(yield* customerOfKey(id, Effect.succeed))
    })

    /** `GET /dashboard/stores/{storeId}/customers`: a store the user may read, in one mode, maybe searched. */
    const listForStore = traced("Customers.listForStore")(function*(storeId: StoreId, params: StoreCustomerListParams) {
      yield* access.currentUser
      const search = params.search?.trim()
      return yield* access.withStore(storeId, "customer.read", (store) =>
        listPage(
          { storeId: store.storeId, livemode: params.livemode ?? false },
          { search: search === undefined || search === "" ? undefined : search },
          params
        ))
    })

    const overview = traced("Customers.overview")(function*(id: CustomerId) {
      const { metrics, recent, row } = yield* customerOfUser(id, "customer.read", (row) =>
        Effect.all({
          row: Effect.succeed(row),
          metrics: payments.customerFigures(row.id),
          recent: payments.recentOfCustomer({ customerId: row.id, limit: RECENT_PAYMENTS })
        }))
      return toCustomer360(row, metrics, recent, yield* publicUrl.get, yield* publicLinks.urls)
    })

    /** The preferences of a customer the user may read, as the 360's preferences panel shows them. */
    const preferencesAsUser = traced("Customers.preferencesAsUser")(function*(id: CustomerId) {
      return yield* customerOfUser(id, "customer.read", (row) => Effect.succeed(toPreferences(row)))
    })

    const consentLog = traced("Customers.consentLog")(function*(id: CustomerId, params: ListParams) {
      const page = yield* customerOfUser(id, "customer.read", (row) =>
        pageAfter(params, (position) => repo.consentLog(row.id, params.limit, position)))
      return new ConsentEventList({ ...page, data: page.data.map(toConsentEvent) })
    })

    // ---------------------------------------------------------------------------------------------
    // Preferences and consent
    // ---------------------------------------------------------------------------------------------

    const consentEvent = (
      customerId: CustomerRow["id"],
      purpose: ConsentPurpose,
      granted: boolean,
      author: ConsentAuthor,
      details: { readonly source: string | null; readonly policyVersion: string | null },
      at: Date
    ): ConsentEventRow => ({
      id: newId("cns"),
      customer_id: customerId,
      purpose,
      granted,
      source: details.source,
      policy_version: details.policyVersion,
      actor_type: author.type,
      actor_id: author.id,
      created_at: at
    })

    /** The customer `id`, locked until the transaction ends: its changes are made one at a time. */
    const lockCustomer = (id: CustomerId) =>
      Effect.flatMap(repo.findForUpdate(id), (found) =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(notFound(id)))

    /**
     * Applies the flags sent to the customer `id`, which the caller may change, and records one consent
     * event per flag that changes; under the customer's row lock, so that two changes at once record each
     * flip once.
     */
    const changePreferences = (id: CustomerId, input: SetPreferences, author: ConsentAuthor) =>
      Effect.gen(function*() {
        const sent = ConsentPurposes.filter((purpose) => input[purpose] !== undefined)
        if (sent.length === 0) {
          return yield* new InvalidRequest({ message: `Send at least one of ${ConsentPurposes.join(", ")}` })
        }
        return yield* repo.inTransaction(Effect.gen(function*() {
          const current = yield* lockCustomer(id)
          if (current.erased_at !== null) {
            return yield* new InvalidState({
              message: `Customer ${id} was erased: its preferences can no longer be changed`,
              param: "id"
            })
          }
          const flags = flagsOf(current)
          const changed = sent.filter((purpose) => input[purpose] !== flags[purpose])
          if (changed.length === 0) return toPreferences(current)
          const at = yield* currentDate
          const next = { ...flags, ...Object.fromEntries(changed.map((purpose) => [purpose, input[purpose]!])) }
          const updated = yield* repo.setPreferences(current.id, next, at)
          const details = { source: input.source ?? author.defaultSource, policyVersion: input.policy_version ?? null }
          yield* repo.insertConsentEvents(
            changed.map((purpose) => consentEvent(current.id, purpose, next[purpose], author, details, at))
          )
          return toPreferences(updated)
        }))
      })

    const setPreferences = traced("Customers.setPreferences")(function*(id: CustomerId, input: SetPreferences) {
      return yield* customerOfKey(id, (_, key) =>
        changePreferences(id, input, { type: "api_key", id: key.keyId, defaultSource: "api" }))
    })

    const setPreferencesAsUser = traced("Customers.setPreferencesAsUser")(function*(
      id: CustomerId,
      input: SetPreferences
    ) {
      return yield* customerOfUser(id, "customer.write", () =>
        Effect.flatMap(access.currentUser, (user) =>
          changePreferences(id, input, { type: "user", id: user.userId, defaultSource: "dashboard" })))
    })

    // ---------------------------------------------------------------------------------------------
    // Erasure
    // ---------------------------------------------------------------------------------------------

    /**
     * Erases the customer's personal data in one transaction (see the route's description). The payments,
     * refunds and ledger of the customer are not touched: they are the merchant's financial records.
     */
    const erase = traced("Customers.erase")(function*(id: CustomerId) {
      return yield* customerOfUser(id, "customer.erase", () => eraseAsUser(id))
    })

    const eraseAsUser = (id: CustomerId) => Effect.gen(function*() {
      const user = yield* access.currentUser
      const author: ConsentAuthor = { type: "user", id: user.userId, defaultSource: "erasure" }
      return yield* repo.inTransaction(Effect.gen(function*() {
        const current = yield* lockCustomer(id)
        const links = yield* publicLinks.urls
        if (current.erased_at !== null) return toCustomer(current, links)
        const at = yield* currentDate
        const given = ConsentPurposes.filter((purpose) => flagsOf(current)[purpose])
        const erased = yield* repo.erase(current.id, at, given.length > 0)
        // Recorded after the free text is cleared: these events carry none of the customer's.
        yield* repo.insertConsentEvents(
          given.map((purpose) =>
            consentEvent(current.id, purpose, false, author, { source: author.defaultSource, policyVersion: null }, at)
          )
        )
        const customer = toCustomer(erased, links)
        yield* idempotency.rewriteAnswers({
          storeId: erased.store_id,
          livemode: erased.livemode,
          objectId: erased.id,
          body: encodeCustomer(customer)
        })
        return customer
      })).pipe(Effect.tap(() => standings.changed(id)))
    })

    // ---------------------------------------------------------------------------------------------
    // Public links
    // ---------------------------------------------------------------------------------------------

    /**
     * Gives the customer a new public token: every link made before stops working. A stored answer of the
     * customer's create is rewritten with the new link, so a replay does not hand out the revoked one.
     */
    const revokeLinksOf = (id: CustomerId) =>
      repo.inTransaction(Effect.gen(function*() {
        const revoked = yield* repo.revokePublicLinks({ id, at: yield* currentDate })
        if (Option.isNone(revoked)) return yield* notFound(id)
        const customer = toCustomer(revoked.value, yield* publicLinks.urls)
        yield* idempotency.rewriteAnswers({
          storeId: revoked.value.store_id,
          livemode: revoked.value.livemode,
          objectId: revoked.value.id,
          body: encodeCustomer(customer)
        })
        return customer
      })).pipe(Effect.tap(() => standings.changed(id)))

    const revokePublicLinks = traced("Customers.revokePublicLinks")(function*(id: CustomerId) {
      return yield* customerOfKey(id, () => revokeLinksOf(id))
    })

    const revokePublicLinksAsUser = traced("Customers.revokePublicLinksAsUser")(function*(id: CustomerId) {
      return yield* customerOfUser(id, "customer.write", () => revokeLinksOf(id))
    })

    // ---------------------------------------------------------------------------------------------
    // For payments
    // ---------------------------------------------------------------------------------------------

    /**
     * Checks that a payment of `owner` may name the customer `id`: a customer of the same store and mode
     * (404 on `customer_id` otherwise), not erased (409: a payment must not tie new records to an
     * erased person).
     */
    const checkPayer = traced("Customers.checkPayer")(function*(id: CustomerId, owner: CustomerOwner) {
      const found = Option.filter(
        yield* repo.find(id),
        (row) => row.store_id === owner.storeId && row.livemode === owner.livemode
      )
      if (Option.isNone(found)) return yield* notFound(id, "customer_id")
      if (found.value.erased_at !== null) {
        return yield* new InvalidState({
          message: `Customer ${id} was erased: new payments cannot name it`,
          param: "customer_id"
        })
      }
    })

    /** The customer's row, for an area that authorized its store already (a segment's preview renders it). */
    const findRow = (id: CustomerId) => repo.find(id)

    return {
      findRow,
      create,
      createFor,
      createForStore,
      list,
      retrieve,
      preferences,
      setPreferences,
      listForStore,
      overview,
      setPreferencesAsUser,
      preferencesAsUser,
      consentLog,
      erase,
      revokePublicLinks,
      revokePublicLinksAsUser,
      checkPayer
    } as const
  }),
  dependencies: [
    CustomersRepo.Default,
    AccessService.Default,
    Idempotency.Default,
    ReferralAttach.Default,
    PublicLinks.Default,
    PaymentReads.Default,
    CustomerStandings.Default
  ]
}) {}
