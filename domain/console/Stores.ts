/**
 * The console's store settings: a store with its branding and masked credentials, its branches (create,
 * edit, deactivate), checkout branding, provider credentials (written, never read back) and the
 * organization's verification (KYC). Each procedure is the store or verification route's rule.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { BranchId, OrganizationId, StoreId } from "../Ids.ts"
import { ListParams } from "../Lists.ts"
import { Branch, BranchList, CreateBranch, ProviderCredentials, Store, UpdateBranch, UpdateBranding } from "../Stores.ts"
import { SubmitVerification, Verification, VerificationNotSubmitted } from "../Verification.ts"

const ReadErrors = Schema.Union(InvalidRequest, Forbidden, NotFound)
const ChangeErrors = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)

export class ConsoleStoresRpcs extends RpcGroup.make(
  /** A store with its branding and its credentials masked (`GET /dashboard/stores/:id`). */
  Rpc.make("GetStore", { payload: { store_id: StoreId }, success: Store, error: ReadErrors }),
  Rpc.make("UpdateBranding", {
    payload: { store_id: StoreId, ...UpdateBranding.fields },
    success: Store,
    error: ChangeErrors
  }),
  /** Sets the KHQR provider credentials; the answer shows them masked, as every later read does. */
  Rpc.make("SetCredentials", {
    payload: { store_id: StoreId, ...ProviderCredentials.fields },
    success: Store,
    error: ChangeErrors
  }),
  /** Switches live mode on (credentials set and verification approved) or off. */
  Rpc.make("SetLiveMode", {
    payload: { store_id: StoreId, live_mode: Schema.Boolean },
    success: Store,
    error: ChangeErrors
  }),
  Rpc.make("ListBranches", {
    payload: { store_id: StoreId, cursor: ListParams.fields.cursor },
    success: BranchList,
    error: ReadErrors
  }),
  Rpc.make("CreateBranch", {
    payload: { store_id: StoreId, ...CreateBranch.fields },
    success: Branch,
    error: ChangeErrors
  }),
  /** Edits a branch; `active: false` deactivates it (its history stays), `true` opens it again. */
  Rpc.make("UpdateBranch", {
    payload: { id: BranchId, ...UpdateBranch.fields },
    success: Branch,
    error: ChangeErrors
  }),
  /** The organization's latest verification, or `not_submitted`. */
  Rpc.make("VerificationStatus", {
    payload: { organization_id: OrganizationId },
    success: Schema.Union(Verification, VerificationNotSubmitted),
    error: ReadErrors
  }),
  Rpc.make("SubmitVerification", {
    payload: SubmitVerification.fields,
    success: Verification,
    error: ChangeErrors
  })
).middleware(ConsoleAuthentication) {}
