/**
 * The rules of stores and branches: who may create and change them, the sealing of provider
 * credentials, the conditions of live mode, and when a branch is deleted rather than deactivated.
 */
import { Effect, Option, Schema } from "effect"
import type { Permission } from "../../domain/Access.ts"
import { InvalidState, NotFound } from "../../domain/Errors.ts"
import type { BranchId, OrganizationId, StoreId } from "../../domain/Ids.ts"
import {
  Branch,
  BranchList,
  type CreateBranch,
  DeletedBranch,
  maskBakongAccountId,
  ProviderCredentials,
  Store,
  StoreBranding,
  StoreCredentialsSummary,
  StoreList,
  type UpdateBranch,
  type UpdateBranding
} from "../../domain/Stores.ts"
import { AccessService, storeData } from "../access/Service.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { newId } from "../platform/Ids.ts"
import { decodeCursor, type ListParams, toPage } from "../platform/Pagination.ts"
import { VerificationService } from "../verification/Service.ts"
import { PlanLimits } from "../limits/Service.ts"
import { StorePaymentSettings } from "./PaymentSettings.ts"
import { type BranchRow, StoresRepo, type StoreRow } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

export const toStore = (row: StoreRow): Store =>
  new Store({
    id: row.id,
    object: "store",
    organization_id: row.organization_id,
    name: row.name,
    branding: new StoreBranding(row.branding),
    credentials: row.credentials_summary === null
      ? null
      : new StoreCredentialsSummary({ configured: true, ...row.credentials_summary }),
    live_mode: row.live_mode,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  })

export const toBranch = (row: BranchRow): Branch =>
  new Branch({
    id: row.id,
    object: "branch",
    store_id: row.store_id,
    name: row.name,
    address: row.address,
    phone: row.phone,
    active: row.active,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  })

export class StoresService extends Effect.Service<StoresService>()("stores/StoresService", {
  effect: Effect.gen(function*() {
    // `storesOfUser` lists only the stores of the signed-in user's own memberships: the query is the check.
    const repo = storeData(yield* StoresRepo, "storesOfUser")
    const access = yield* AccessService
    const secrets = yield* SecretBox
    const verification = yield* VerificationService
    const paymentSettings = yield* StorePaymentSettings
    const limits = yield* PlanLimits

    const storeNotFound = (storeId: StoreId) => new NotFound({ message: `No such store: ${storeId}`, param: "id" })
    const branchNotFound = (branchId: BranchId) => new NotFound({ message: `No such branch: ${branchId}`, param: "id" })

    /** The store, if the signed-in user may do `permission` on it. These are console routes: API keys are refused. */
    const authorizedStore = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withStore(storeId, permission, () =>
          Effect.flatMap(repo.findStore(storeId), (row): Effect.Effect<A, E | NotFound, R> =>
            Option.isNone(row) ? Effect.fail(storeNotFound(storeId)) : use(row.value)))
      )

    /** The branch, if the signed-in user may do `permission` on its store; another tenant's branch is 404 too. */
    const authorizedBranch = <A, E, R>(branchId: BranchId, permission: Permission, use: (found: BranchRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findBranch(branchId), (branch) => branch.store_id, permission, () => branchNotFound(branchId), use)
      )

    const orNotFound = <A>(found: Option.Option<A>, notFound: NotFound) =>
      Option.match(found, { onNone: () => Effect.fail(notFound), onSome: Effect.succeed })

    // -------------------------------------------------------------------------------------------
    // Stores
    // -------------------------------------------------------------------------------------------

    const create = traced("Stores.create")(function*(input: {
      readonly name: string
      readonly organization_id?: OrganizationId | undefined
    }) {
      const inserted = yield* access.withOrganization(
        access.organizationOrFirst(input.organization_id, "store.create"),
        ({ organizationId }) =>
          limits.withRoom(organizationId, "stores", repo.insertStore({ id: newId("str"), organizationId, name: input.name }))
      )
      return toStore(inserted)
    })

    const list = traced("Stores.list")(function*(params: ListParams) {
      const user = yield* access.currentUser
      const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
      const rows = yield* repo.storesOfUser(user.userId, params.limit, position)
      const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
      return new StoreList({ ...page, data: page.data.map(toStore) })
    })

    const retrieve = traced("Stores.retrieve")(function*(storeId: StoreId) {
      return toStore(yield* authorizedStore(storeId, "store.read", Effect.succeed))
    })

    const updateBranding = traced("Stores.updateBranding")(function*(storeId: StoreId, input: UpdateBranding) {
      return yield* authorizedStore(storeId, "store.update", () =>
        Effect.gen(function*() {
          // PUT replaces the branding as a whole; colours are kept in one spelling so they compare equal.
          const updated = yield* repo.updateBranding(storeId, {
            display_name: input.display_name ?? null,
            primary_color: input.primary_color?.toLowerCase() ?? null,
            accent_color: input.accent_color?.toLowerCase() ?? null,
            logo_url: input.logo_url ?? null
          })
          return toStore(yield* orNotFound(updated, storeNotFound(storeId)))
        }))
    })

    const setCredentials = traced("Stores.setCredentials")(function*(storeId: StoreId, input: ProviderCredentials) {
      return yield* authorizedStore(storeId, "store.credentials.manage", () =>
        Effect.gen(function*() {
          const credentials = new ProviderCredentials({
            bakong_account_id: input.bakong_account_id,
            merchant_name: input.merchant_name,
            merchant_city: input.merchant_city,
            acquiring_bank: input.acquiring_bank
          })
          const sealed = yield* secrets.seal(JSON.stringify(credentials))
          const updated = yield* repo.updateCredentials(storeId, sealed, {
            bakong_account_id: maskBakongAccountId(credentials.bakong_account_id),
            merchant_name: credentials.merchant_name,
            merchant_city: credentials.merchant_city,
            acquiring_bank: credentials.acquiring_bank
          })
          yield* paymentSettings.changed(storeId)
          return toStore(yield* orNotFound(updated, storeNotFound(storeId)))
        }))
    })

    const setLiveMode = traced("Stores.setLiveMode")(function*(storeId: StoreId, liveMode: boolean) {
      return yield* authorizedStore(storeId, "store.live_mode.manage", (store) =>
        Effect.gen(function*() {
          if (liveMode && !store.live_mode) {
            const missing: Array<string> = []
            if (store.credentials_summary === null) {
              missing.push("payment-provider credentials (set them with PUT /stores/{id}/credentials)")
            }
            const status = yield* verification.latestStatus(store.organization_id)
            if (Option.getOrUndefined(status) !== "approved") {
              const current = Option.match(status, { onNone: () => "not submitted", onSome: (s) => s })
              missing.push(`an approved merchant verification of the organization (its verification is ${current})`)
            }
            if (missing.length > 0) {
              return yield* new InvalidState({ message: `Live mode cannot be switched on: it needs ${missing.join(" and ")}` })
            }
          }
          const updated = yield* repo.setLiveMode(storeId, liveMode)
          yield* paymentSettings.changed(storeId)
          if (Option.isSome(updated)) return toStore(updated.value)
          // The store was checked above; only a concurrent change can get here.
          return yield* new InvalidState({ message: "The store changed while switching live mode; try again" })
        }))
    })

    /** The store, for other areas (checkout, payments) that have checked access already and hold the proof. */
    const getById = traced("Stores.getById")(function*(storeId: StoreId) {
      return toStore(yield* orNotFound(yield* repo.findStore(storeId), storeNotFound(storeId)))
    })

    /**
     * The store's provider credentials in full, decrypted; None until the merchant sets them. For the
     * payments engine only: never return them on a route.
     */
    const providerCredentials = traced("Stores.providerCredentials")(function*(storeId: StoreId) {
      return Option.flatMap(yield* paymentSettings.of(storeId), (settings) => settings.credentials)
    })

    // -------------------------------------------------------------------------------------------
    // Branches
    // -------------------------------------------------------------------------------------------

    const createBranch = traced("Stores.createBranch")(function*(storeId: StoreId, input: CreateBranch) {
      return yield* authorizedStore(storeId, "store.update", () =>
        Effect.gen(function*() {
          return toBranch(
            yield* repo.insertBranch({
              id: newId("br"),
              storeId,
              name: input.name,
              address: input.address ?? null,
              phone: input.phone ?? null
            })
          )
        }))
    })

    const listBranches = traced("Stores.listBranches")(function*(storeId: StoreId, params: ListParams) {
      return yield* authorizedStore(storeId, "store.read", () =>
        Effect.gen(function*() {
          const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          const rows = yield* repo.branchesOfStore(storeId, params.limit, position)
          const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
          return new BranchList({ ...page, data: page.data.map(toBranch) })
        }))
    })

    const updateBranch = traced("Stores.updateBranch")(function*(branchId: BranchId, input: UpdateBranch) {
      return yield* authorizedBranch(branchId, "store.update", () =>
        Effect.gen(function*() {
          const updated = yield* repo.updateBranch(branchId, input)
          return toBranch(yield* orNotFound(updated, branchNotFound(branchId)))
        }))
    })

    /** Deletes a branch, or deactivates it when it has history, so that the records pointing at it still resolve. */
    const deleteBranch = traced("Stores.deleteBranch")(function*(branchId: BranchId) {
      return yield* authorizedBranch(branchId, "store.update", () =>
        Effect.gen(function*() {
          if (yield* repo.deleteBranchWithoutHistory(branchId)) {
            return new DeletedBranch({ id: branchId, object: "branch", deleted: true })
          }
          const deactivated = yield* repo.deactivateBranch(branchId)
          return toBranch(yield* orNotFound(deactivated, branchNotFound(branchId)))
        }))
    })

    /** The branch, for payments under their own access proof (they check that it belongs to their store). */
    const findBranch = traced("Stores.findBranch")(function*(branchId: BranchId) {
      return Option.map(yield* repo.findBranch(branchId), toBranch)
    })

    /**
     * Records that something (a payment) refers to the branch, so deleting it later only deactivates it;
     * false when the branch was deleted meanwhile. Run it in the transaction that writes the referring
     * record, before that record.
     */
    const markBranchHasHistory = traced("Stores.markBranchHasHistory")(function*(branchId: BranchId) {
      return yield* repo.markBranchHasHistory(branchId)
    })

    return {
      create,
      list,
      retrieve,
      updateBranding,
      setCredentials,
      setLiveMode,
      getById,
      providerCredentials,
      createBranch,
      listBranches,
      updateBranch,
      deleteBranch,
      findBranch,
      markBranchHasHistory
    } as const
  }),
  dependencies: [
    StoresRepo.Default,
    AccessService.Default,
    SecretBox.Default,
    VerificationService.Default,
    StorePaymentSettings.Default,
    PlanLimits.Default
  ]
}) {}
