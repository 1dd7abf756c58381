/**
 * Revenue shares (API.md "Analytics, ledger, revenue shares, risk"): splits of a store's paid payments with
 * partners, posted in each payment's journal entry. Console routes, with a user session: analytics.read to
 * read, marketing.manage to change them.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import { InvalidRequestResponse, InvalidStateResponse, NotFoundResponse } from "./Errors.ts"
import { RevenueShareId, StoreId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import { closed, MAX_NAME_LENGTH } from "./Text.ts"

export const Percent = Schema.String.pipe(
  Schema.pattern(/^\d{1,3}(\.\d{1,4})?$/, { message: () => "percent must be a decimal string such as \"12.5\", at most 4 decimals" }),
  Schema.filter((text) => (Number(text) > 0 && Number(text) <= 100) || "percent must be greater than 0 and at most 100", {
    jsonSchema: {}
  })
).annotations({ description: "A percentage of each paid payment, greater than 0 and at most 100", examples: ["12.5"] })

export const RevenueShare = Schema.Struct({
  id: RevenueShareId,
  object: Schema.Literal("revenue_share"),
  store_id: StoreId,
  party: Schema.String,
  percent: Schema.String,
  active: Schema.Boolean,
  created_at: Schema.String
}).annotations({ identifier: "RevenueShare" })
export type RevenueShare = typeof RevenueShare.Type

const Party = Schema.String.pipe(
  Schema.trimmed({ message: () => "party must not start or end with spaces" }),
  Schema.minLength(1, { message: () => "party must not be empty" }),
  Schema.maxLength(MAX_NAME_LENGTH, { message: () => `party must be at most ${MAX_NAME_LENGTH} characters` })
).annotations({ description: "Who receives the share (a partner, a franchisor)", examples: ["Mall landlord"] })

export const CreateRevenueShare = closed(Schema.Struct({
  party: Party,
  percent: Percent,
  active: Schema.optional(Schema.Boolean.annotations({ description: "Default true" }))
}), "RevenueShareDto")
export type CreateRevenueShare = typeof CreateRevenueShare.Type

export const UpdateRevenueShare = closed(Schema.Struct({
  party: Schema.optional(Party),
  percent: Schema.optional(Percent),
  active: Schema.optional(Schema.Boolean)
}), "UpdateRevenueShareDto")
export type UpdateRevenueShare = typeof UpdateRevenueShare.Type

export const DeletedRevenueShare = Schema.Struct({
  id: RevenueShareId,
  object: Schema.Literal("revenue_share"),
  deleted: Schema.Literal(true)
})

const StorePath = Schema.Struct({ storeId: StoreId })
const READ = "Needs analytics.read (Owner, Admin, Developer, Analyst)."
const MANAGE_SHARES = "Needs marketing.manage (Owner, Admin)."

export class RevenueSharesGroup extends HttpApiGroup.make("revenueShares")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/revenue-shares")
      .setPath(StorePath)
      .setUrlParams(ListParams)
      .addSuccess(ListOf(RevenueShare))
      .annotate(OpenApi.Summary, "List revenue-share agreements")
      .annotate(OpenApi.Description, "Newest first. " + READ)
  )
  .add(
    HttpApiEndpoint.post("create", "/dashboard/stores/:storeId/revenue-shares")
      .setPath(StorePath)
      .setPayload(CreateRevenueShare)
      .addSuccess(RevenueShare, { status: 201 })
      .annotate(OpenApi.Summary, "Create a revenue share")
      .annotate(
        OpenApi.Description,
        "From the next paid payment on, `percent` of each paid payment (floored to the minor unit) moves from " +
          "`merchant_payable` to `revenue_share_payable` in the payment's journal entry; a refund moves the " +
          "refunded share back. The active shares of a store sum to at most 100 (409 `invalid_state` beyond, " +
          "also when two creates race). " + MANAGE_SHARES
      )
  )
  .add(
    HttpApiEndpoint.put("update", "/dashboard/revenue-shares/:shareId")
      .setPath(Schema.Struct({ shareId: RevenueShareId }))
      .setPayload(UpdateRevenueShare)
      .addSuccess(RevenueShare)
      .annotate(OpenApi.Summary, "Update a revenue share")
      .annotate(OpenApi.Description, "Any of `party`, `percent`, `active`; the 100 % rule holds. Entries already posted stay. " + MANAGE_SHARES)
  )
  .add(
    HttpApiEndpoint.del("delete", "/dashboard/revenue-shares/:shareId")
      .setPath(Schema.Struct({ shareId: RevenueShareId }))
      .addSuccess(DeletedRevenueShare)
      .annotate(OpenApi.Summary, "Delete a revenue share")
      .annotate(OpenApi.Description, "It stops applying to payments paid from now on; entries already posted stay. " + MANAGE_SHARES)
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Revenue shares")
  .annotate(OpenApi.Description, "Splits of a store's payments with partners.")
{}
