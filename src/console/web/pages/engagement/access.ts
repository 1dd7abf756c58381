/**
 * What the signed-in user's role may do in the current store's organization, for the engagement pages to
 * hide or disable what the server would refuse (the server still checks every call). The grants mirror the
 * access policy's for the permissions these pages use.
 */
import type { Permission, Role } from "../../../../../domain/Access.ts"
import { useWorkspace } from "../../workspace.tsx"

type EngagementPermission = Extract<Permission, "customer.write" | "customer.erase" | "marketing.manage" | "promotion.approve">

const GRANTED: Record<EngagementPermission, ReadonlyArray<Role>> = {
  "customer.write": ["owner", "admin"],
  "customer.erase": ["owner", "admin"],
  "marketing.manage": ["owner", "admin"],
  "promotion.approve": ["owner"]
}

const ROLE_NAMES: Record<Role, string> = { owner: "Owner", admin: "Admin", developer: "Developer", analyst: "Analyst" }

export interface StoreAccess {
  readonly role: Role | undefined
  readonly can: (permission: EngagementPermission) => boolean
  /** Why a control is disabled: "Your role (Analyst) cannot …". */
  readonly reason: (what: string) => string
}

export const useStoreAccess = (): StoreAccess => {
  const { context, store } = useWorkspace()
  const role = context.me.organizations.find((organization) => organization.id === store?.organization_id)?.role as Role | undefined
  return {
    role,
    can: (permission) => role !== undefined && GRANTED[permission].includes(role),
    reason: (what) => `Your role (${role === undefined ? "none" : ROLE_NAMES[role]}) cannot ${what}; ask an Owner or Admin.`
  }
}

/** A button's props when the action is not allowed: disabled, with the reason as its tooltip. */
export const guard = (allowed: boolean, reason: string): { readonly disabled?: true; readonly title?: string } =>
  allowed ? {} : { disabled: true, title: reason }
