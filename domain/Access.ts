/**
 * The access console: the role-by-permission matrix and attribute policies as the routes enforce them,
 * and a simulated decision for the current user. The roles and permissions are defined here, in the
 * contract a typed client sees; which role is granted what is decided by `src/access/Policy.ts`, the
 * module the routes themselves evaluate.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { authenticated } from "./Auth.ts"
import { InvalidRequestResponse, NotFoundResponse } from "./Errors.ts"
import { OrganizationId, StoreId } from "./Ids.ts"
import { closed } from "./Text.ts"

export const Roles = ["owner", "admin", "developer", "analyst"] as const
export type Role = (typeof Roles)[number]

/** Every permission a route can require, with what it allows. */
export const PermissionCatalogue = {
  "organization.read": "See the organization, its members and its verification status",
  "member.manage": "Add members to the organization and choose their roles",
  "verification.submit": "Submit merchant verification (KYC) documents",
  "store.read": "See stores, branches and their settings (credentials masked)",
  "store.create": "Create stores",
  "store.update": "Change a store's branding and branches",
  "store.credentials.manage": "Set a store's payment-provider credentials",
  "store.live_mode.manage": "Switch a store's live mode on or off",
  "api_key.read": "List a store's API keys (never their secrets)",
  "api_key.manage": "Create, revoke and rotate API keys",
  "webhook.read": "See webhook endpoints and deliveries",
  "webhook.manage": "Create, change and delete webhook endpoints; reveal and rotate secrets",
  "payment.read": "See payments, refunds and checkout links",
  "payment.write": "Create and cancel payments and payment links",
  "payment.refund": "Refund payments below the high-value threshold",
  "payment.refund.high_value": "Refund at or above the high-value threshold (also needs MFA)",
  "customer.read": "See customers, loyalty balances and referrals",
  "customer.write": "Change customers, preferences, loyalty points and referral payouts",
  "customer.erase": "Erase a customer's personal data (right to erasure); payments and the ledger stay",
  "marketing.manage": "Manage loyalty programs, rewards, promotions, segments and games",
  "promotion.approve": "Approve or reject promotions",
  "analytics.read": "See analytics, ledger and risk reports",
  "risk.manage": "Update risk cases",
  "integration.manage": "Install connectors and configure notifications",
  "billing.manage": "Change the organization's plan"
} as const
export type Permission = keyof typeof PermissionCatalogue
export const Permissions = Object.keys(PermissionCatalogue) as ReadonlyArray<Permission>

export const RoleSchema = Schema.Literal(...Roles)

export const PermissionSchema = Schema.Literal(...Permissions).annotations({
  // `override`: without it a union reports its first member only ("Expected \"organization.read\"").
  message: () => ({
    message: "must be one of the permissions listed by GET /dashboard/orgs/{orgId}/access/matrix",
    override: true
  }),
  description: "A permission of the access matrix."
})

export const MatrixRow = Schema.Struct({
  permission: PermissionSchema,
  description: Schema.String,
  roles: Schema.Struct(
    Object.fromEntries(Roles.map((role) => [role, Schema.Boolean])) as { [R in (typeof Roles)[number]]: typeof Schema.Boolean }
  ).annotations({ description: "Whether each role is granted the permission." })
})

export const AttributePolicy = Schema.Struct({
  id: Schema.String,
  description: Schema.String
})

export class AccessMatrix extends Schema.Class<AccessMatrix>("AccessMatrix")({
  object: Schema.Literal("access_matrix"),
  organization_id: OrganizationId,
  roles: Schema.Array(RoleSchema),
  permissions: Schema.Array(MatrixRow),
  attribute_policies: Schema.Array(AttributePolicy).annotations({
    description: "Rules on top of roles (tenancy, API-key scope, high-value refunds, live mode, platform admins)."
  }),
  your_role: RoleSchema
}) {}

export const AccessCheck = closed(
  Schema.Struct({
    permission: PermissionSchema,
    store_id: Schema.optional(StoreId.annotations({
      description: "Ask about one store of this organization; a store of any other organization (or none) is 404."
    }))
  }),
  "CheckDto"
)

export class AccessDecision extends Schema.Class<AccessDecision>("AccessDecision")({
  object: Schema.Literal("access_decision"),
  permission: PermissionSchema,
  store_id: Schema.NullOr(StoreId),
  allowed: Schema.Boolean,
  role: RoleSchema,
  reason: Schema.String
}) {}

const OrgPath = Schema.Struct({ orgId: OrganizationId })

export class AccessGroup extends HttpApiGroup.make("access")
  .add(
    HttpApiEndpoint.get("matrix", "/dashboard/orgs/:orgId/access/matrix")
      .setPath(OrgPath)
      .addSuccess(AccessMatrix)
      .annotate(OpenApi.Summary, "Role-by-permission matrix and attribute-policy catalogue")
      .annotate(OpenApi.Description, "Any member of the organization may read it; for anyone else the organization does not exist (404).")
  )
  .add(
    HttpApiEndpoint.post("check", "/dashboard/orgs/:orgId/access/check")
      .setPath(OrgPath)
      .setPayload(AccessCheck)
      .addSuccess(AccessDecision, { status: 201 })
      .annotate(OpenApi.Summary, "Simulate an access decision for the current user")
      .annotate(
        OpenApi.Description,
        "Evaluates the same role policy the routes enforce, for the calling user in this organization. " +
          "With `store_id`, the store must belong to this organization: any other store answers 404 " +
          "`not_found` (param `store_id`), exactly as a store route would. Attribute policies (live mode, " +
          "high-value refunds) are enforced by the routes they concern and are not simulated here."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .annotate(OpenApi.Title, "Access")
  .annotate(OpenApi.Description, "The role-by-permission matrix and a check of what a role may do, as the console shows them.")
{}
