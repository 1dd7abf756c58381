/**
 * Stores and their branches: checkout branding, the store's KHQR provider credentials (sealed at rest,
 * only ever shown masked), and the live-mode switch.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ListOf, ListParams } from "./Lists.ts"
import { authenticated } from "./Auth.ts"
import {
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import { BranchId, OrganizationId, StoreId } from "./Ids.ts"
import { closed, MAX_NAME_LENGTH } from "./Text.ts"

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

const MAX_URL_LENGTH = 2048

/**
 * An absolute `https://` URL. Plain http is refused because these URLs end up on the hosted checkout
 * page (a logo) or in front of reviewers (documents), which are served over https.
 */
export const HttpsUrl = Schema.String.pipe(
  Schema.maxLength(MAX_URL_LENGTH, { message: () => `must be at most ${MAX_URL_LENGTH} characters` }),
  Schema.filter((value) => {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return "must be an absolute https:// URL"
    }
    if (url.protocol !== "https:") return "must be an https:// URL"
    if (url.hostname.length === 0) return "must name a host"
    if (url.username !== "" || url.password !== "") return "must not contain a user name or password"
    return true
  }, { jsonSchema: {} })
).annotations({ description: "An absolute https:// URL", examples: ["https://cdn.example.com/logo.png"] })

export const HexColor = Schema.String.pipe(
  Schema.pattern(/^#[0-9A-Fa-f]{6}$/, { message: () => "must be a colour written as #rrggbb, such as #1a73e8" })
).annotations({ description: "A colour as #rrggbb", examples: ["#1a73e8"] })

/** A trimmed, non-empty string of at most `max` characters. */
export const boundedText = (max: number) =>
  Schema.String.pipe(
    Schema.trimmed({ message: () => "must not start or end with spaces" }),
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

export const StoreName = boundedText(MAX_NAME_LENGTH)

// KHQR (EMVCo merchant-presented QR) limits: the values go into the QR payload as they are, so a value
// the QR format cannot carry is refused here rather than when the first payment is made.
const PRINTABLE_ASCII = /^[\x20-\x7E]+$/
const khqrText = (max: number) =>
  boundedText(max).pipe(
    Schema.pattern(PRINTABLE_ASCII, { message: () => "must use letters, digits, spaces and basic punctuation only" })
  )

export const BakongAccountId = Schema.String.pipe(
  Schema.maxLength(32, { message: () => "must be at most 32 characters" }),
  Schema.pattern(/^[A-Za-z0-9._-]+@[A-Za-z0-9._-]+$/, {
    message: () => "must be a Bakong account id such as merchant_name@bank"
  })
).annotations({ description: "The Bakong account id that receives payments, `name@bank`", examples: ["coffee_shop@aclb"] })

/** The KHQR provider credentials of a store, as the merchant sets them and the payments engine reads them. */
export class ProviderCredentials extends Schema.Class<ProviderCredentials>("ProviderCredentials")({
  bakong_account_id: BakongAccountId,
  merchant_name: khqrText(25).annotations({ description: "Merchant name in the QR (at most 25 characters)" }),
  merchant_city: khqrText(15).annotations({ description: "Merchant city in the QR (at most 15 characters)" }),
  acquiring_bank: khqrText(32).annotations({ description: "The acquiring bank (at most 32 characters)" })
}) {}

/**
 * A Bakong account id as it may be shown again: the bank part stays readable (it is no secret and helps
 * tell accounts apart), the account name is masked except its last two characters when it is long
 * enough that two characters give little away.
 */
export const maskBakongAccountId = (accountId: string): string => {
  const at = accountId.lastIndexOf("@")
  const name = at < 0 ? accountId : accountId.slice(0, at)
  const bank = at < 0 ? "" : accountId.slice(at)
  const visible = name.length >= 6 ? 2 : 0
  return "*".repeat(name.length - visible) + name.slice(name.length - visible) + bank
}

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

export class StoreBranding extends Schema.Class<StoreBranding>("StoreBranding")({
  display_name: Schema.NullOr(Schema.String),
  primary_color: Schema.NullOr(Schema.String),
  accent_color: Schema.NullOr(Schema.String),
  logo_url: Schema.NullOr(Schema.String)
}) {}

export class StoreCredentialsSummary extends Schema.Class<StoreCredentialsSummary>("StoreCredentialsSummary")({
  configured: Schema.Literal(true),
  bakong_account_id: Schema.String.annotations({ description: "Masked; the full account id is never returned" }),
  merchant_name: Schema.String,
  merchant_city: Schema.String,
  acquiring_bank: Schema.String
}) {}

export class Store extends Schema.Class<Store>("Store")({
  id: StoreId,
  object: Schema.Literal("store"),
  organization_id: OrganizationId,
  name: Schema.String,
  branding: StoreBranding,
  credentials: Schema.NullOr(StoreCredentialsSummary).annotations({
    description: "The provider credentials, masked; null until they are set"
  }),
  live_mode: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class StoreList extends Schema.Class<StoreList>("StoreList")(ListOf(Store).fields) {}

export class Branch extends Schema.Class<Branch>("Branch")({
  id: BranchId,
  object: Schema.Literal("branch"),
  store_id: StoreId,
  name: Schema.String,
  address: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  active: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
}) {}

export class BranchList extends Schema.Class<BranchList>("BranchList")(ListOf(Branch).fields) {}

export class DeletedBranch extends Schema.Class<DeletedBranch>("DeletedBranch")({
  id: BranchId,
  object: Schema.Literal("branch"),
  deleted: Schema.Literal(true)
}) {}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

const BranchAddress = boundedText(500)
export const PhoneNumber = Schema.String.pipe(
  Schema.pattern(/^\+?[0-9][0-9 ()-]{4,23}$/, { message: () => "must be a phone number such as +855 12 345 678" })
)

export const CreateStore = closed(
  Schema.Struct({
    name: StoreName,
    organization_id: Schema.optional(
      OrganizationId.annotations({ description: "The organization to create it in; the user's first one when omitted" })
    )
  }),
  "CreateStoreDto"
)

export const UpdateBranding = closed(
  Schema.Struct({
    display_name: Schema.optional(Schema.NullOr(boundedText(100))),
    primary_color: Schema.optional(Schema.NullOr(HexColor)),
    accent_color: Schema.optional(Schema.NullOr(HexColor)),
    logo_url: Schema.optional(Schema.NullOr(HttpsUrl))
  }),
  "UpdateBrandingDto"
)
export type UpdateBranding = typeof UpdateBranding.Type

export const SetLiveMode = closed(Schema.Struct({ live_mode: Schema.Boolean }), "ActivateLiveDto")

export const CreateBranch = closed(
  Schema.Struct({
    name: boundedText(MAX_NAME_LENGTH),
    address: Schema.optional(Schema.NullOr(BranchAddress)),
    phone: Schema.optional(Schema.NullOr(PhoneNumber))
  }),
  "CreateBranchDto"
)
export type CreateBranch = typeof CreateBranch.Type

export const UpdateBranch = closed(
  Schema.Struct({
    name: Schema.optional(boundedText(MAX_NAME_LENGTH)),
    address: Schema.optional(Schema.NullOr(BranchAddress)),
    phone: Schema.optional(Schema.NullOr(PhoneNumber)),
    active: Schema.optional(Schema.Boolean)
  }),
  "UpdateBranchDto"
)
export type UpdateBranch = typeof UpdateBranch.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const IdPath = Schema.Struct({ id: StoreId })
const StoreIdPath = Schema.Struct({ storeId: StoreId })
const BranchPath = Schema.Struct({ id: BranchId })

export class StoresGroup extends HttpApiGroup.make("stores")
  .add(
    HttpApiEndpoint.post("create", "/stores")
      .setPayload(CreateStore)
      .addSuccess(Store, { status: 201 })
      .annotate(OpenApi.Summary, "Create a store")
      .annotate(
        OpenApi.Description,
        "Creates a store in `organization_id`, or in the user's first organization when it is omitted. " +
          "Needs the store.create permission there (Owner, Admin). The store starts in test mode."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/stores")
      .setUrlParams(ListParams)
      .addSuccess(StoreList)
      .annotate(OpenApi.Summary, "List stores across the user's organizations")
      .annotate(
        OpenApi.Description,
        "Every store of every organization the signed-in user belongs to, newest first. Needs a session token."
      )
  )
  .add(
    HttpApiEndpoint.get("retrieve", "/stores/:id")
      .setPath(IdPath)
      .addSuccess(Store)
      .annotate(OpenApi.Summary, "Retrieve a store")
      .annotate(
        OpenApi.Description,
        "A store of one of the user's organizations (another tenant's store is 404). Credentials are shown masked; null until set."
      )
  )
  .add(
    HttpApiEndpoint.put("updateBranding", "/stores/:id/branding")
      .setPath(IdPath)
      .setPayload(UpdateBranding)
      .addSuccess(Store)
      .annotate(OpenApi.Summary, "Update checkout branding")
      .annotate(
        OpenApi.Description,
        "Replaces the store's checkout branding: a field that is omitted or null is cleared. Colours are " +
          "`#rrggbb`; the logo must be an https:// URL. Needs store.update (Owner, Admin)."
      )
  )
  .add(
    HttpApiEndpoint.put("setCredentials", "/stores/:id/credentials")
      .setPath(IdPath)
      .setPayload(closed(ProviderCredentials, "UpsertCredentialDto"))
      .addSuccess(Store)
      .annotate(OpenApi.Summary, "Configure encrypted payment-provider credentials")
      .annotate(
        OpenApi.Description,
        "Sets the store's KHQR provider credentials, replacing any earlier ones. They are encrypted at " +
          "rest and never returned in full: the store shows them with the Bakong account id masked. " +
          "Needs store.credentials.manage (Owner, Admin)."
      )
  )
  .add(
    HttpApiEndpoint.put("setLiveMode", "/stores/:id/live-mode")
      .setPath(IdPath)
      .setPayload(SetLiveMode)
      .addSuccess(Store)
      .addError(InvalidStateResponse)
      .annotate(OpenApi.Summary, "Activate or deactivate live mode")
      .annotate(
        OpenApi.Description,
        "Switching live mode on requires both the store's payment-provider credentials " +
          "(PUT /stores/{id}/credentials) and an approved merchant verification of the store's " +
          "organization (its latest submission approved); otherwise the answer is 409 `invalid_state` " +
          "saying what is missing. Switching it off is always allowed. Needs store.live_mode.manage " +
          "(Owner, Admin)."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Stores")
  .annotate(OpenApi.Description, "A merchant's stores: branding, payment-provider credentials and live mode.")
{}

export class BranchesGroup extends HttpApiGroup.make("branches")
  .add(
    HttpApiEndpoint.post("create", "/stores/:storeId/branches")
      .setPath(StoreIdPath)
      .setPayload(CreateBranch)
      .addSuccess(Branch, { status: 201 })
      .annotate(OpenApi.Summary, "Create a branch")
      .annotate(
        OpenApi.Description,
        "A branch (a physical location) of the store; payments may name it with `branch_id`. Needs store.update (Owner, Admin)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/stores/:storeId/branches")
      .setPath(StoreIdPath)
      .setUrlParams(ListParams)
      .addSuccess(BranchList)
      .annotate(OpenApi.Summary, "List branches of a store, active and inactive")
      .annotate(
        OpenApi.Description,
        "Newest first; a deactivated branch stays in the list with `active: false`."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/branches/:id")
      .setPath(BranchPath)
      .setPayload(UpdateBranch)
      .addSuccess(Branch)
      .annotate(OpenApi.Summary, "Update a branch")
      .annotate(OpenApi.Description, "Changes only the fields sent; `null` clears the address or phone.")
  )
  .add(
    HttpApiEndpoint.del("delete", "/branches/:id")
      .setPath(BranchPath)
      .addSuccess(Schema.Union(DeletedBranch, Branch))
      .annotate(OpenApi.Summary, "Delete or deactivate a branch")
      .annotate(
        OpenApi.Description,
        "A branch that has history (payments were ever made at it) is kept for the record and " +
          "deactivated: the answer is the branch with `active: false`. Any other branch is deleted: " +
          "the answer is `{ id, object: \"branch\", deleted: true }`."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Branches")
  .annotate(OpenApi.Description, "The branches (physical locations) of a store.")
{}
