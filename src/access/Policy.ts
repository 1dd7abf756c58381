/**
 * The access policy: which role may do what, and the attribute rules on top of roles. Routes, the
 * access matrix and the access check all evaluate this one module, so what the console shows is what
 * the routes enforce. A route cannot skip it: AccessService's checks decide with `decide`, and a store's
 * data is reachable only under the proof those checks leave (see Service.ts).
 */
import { type Permission, PermissionCatalogue, Permissions, type Role, Roles } from "../../domain/Access.ts"

const readOnly: ReadonlyArray<Permission> = [
  "organization.read",
  "store.read",
  "api_key.read",
  "webhook.read",
  "payment.read",
  "customer.read",
  "analytics.read"
]

const grants: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(Permissions),
  admin: new Set(
    Permissions.filter((p) =>
      p !== "payment.refund.high_value" && p !== "promotion.approve" && p !== "billing.manage"
    )
  ),
  developer: new Set<Permission>([
    ...readOnly,
    "api_key.manage",
    "webhook.manage",
    "payment.write",
    "integration.manage"
  ]),
  analyst: new Set<Permission>(readOnly)
}

export const roleAllows = (role: Role, permission: Permission): boolean => grants[role].has(permission)

/** The role-by-permission matrix, as the console shows it. */
export const accessMatrix = () =>
  Permissions.map((permission) => ({
    permission,
    description: PermissionCatalogue[permission],
    roles: Object.fromEntries(Roles.map((role) => [role, roleAllows(role, permission)])) as Record<Role, boolean>
  }))

/** Rules that depend on more than the role; each is enforced where its subject is handled. */
export const AttributePolicies = [
  {
    id: "tenant_isolation",
    description: "A user acts only on organizations they are a member of and on their stores; any other object answers 404 as if it did not exist."
  },
  {
    id: "api_key_scope",
    description: "An API key acts for its one store and its one mode: a test key never sees live data, and a live key cannot simulate payments."
  },
  {
    id: "high_value_refund",
    description: "A refund at or above REFUND_MFA_THRESHOLD needs an Owner session with MFA enabled and a fresh TOTP code; API keys cannot make one."
  },
  {
    id: "live_mode_activation",
    description: "A store can switch live mode on only with payment-provider credentials set and the organization's verification approved."
  },
  {
    id: "platform_admin",
    description: "Routes under /admin and /dashboard/admin are for the users whose e-mail is listed in PLATFORM_ADMIN_EMAILS."
  }
] as const

export interface AccessDecision {
  readonly allowed: boolean
  readonly reason: string
}

/** The decision for one member of an organization; `role` is undefined for a non-member. */
export const decide = (role: Role | undefined, permission: Permission): AccessDecision => {
  if (role === undefined) return { allowed: false, reason: "not a member of this organization" }
  return roleAllows(role, permission)
    ? { allowed: true, reason: `the ${role} role grants ${permission}` }
    : { allowed: false, reason: `the ${role} role does not grant ${permission}` }
}
