/**
 * What the signed-in user may do where they are working, as the server decides it: the role comes from the
 * user's membership of the current store's organization, the grants from the access matrix the server
 * enforces (ConsoleContext.access). Pages hide or disable what a role may not do and say why; the server
 * refuses it anyway.
 *
 *   const refund = usePermission("payment.refund")
 *   <PermittedButton permission="payment.refund" …> (ui/Permitted.tsx) disables itself with the reason.
 */
import type { Permission, Role } from "../../../domain/Access.ts"
import { useWorkspace } from "./workspace.tsx"

export type { Permission, Role }

export interface PermissionAnswer {
  readonly allowed: boolean
  /** Why not, in a sentence the user can act on; undefined when allowed. */
  readonly reason: string | undefined
  /** The user's role in the organization (undefined when they are not a member of it). */
  readonly role: Role | undefined
}

export const ROLE_LABELS: Record<Role, string> = { owner: "Owner", admin: "Admin", developer: "Developer", analyst: "Analyst" }

const article = (word: string) => (/^[aeiou]/i.test(word) ? "an" : "a")

const listed = (words: ReadonlyArray<string>) =>
  words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`

/** The decision for `role` on `permission` against the matrix; pure, for pages that ask about several roles. */
export const decide = (
  access: ReadonlyArray<{ readonly permission: string; readonly description: string; readonly roles: Readonly<Record<Role, boolean>> }>,
  role: Role | undefined,
  permission: Permission
): PermissionAnswer => {
  const row = access.find((candidate) => candidate.permission === permission)
  if (role === undefined) return { allowed: false, role, reason: "You are not a member of this store's organization." }
  if (row?.roles[role] === true) return { allowed: true, role, reason: undefined }
  const granted = row === undefined ? [] : (Object.keys(row.roles) as Array<Role>).filter((candidate) => row.roles[candidate])
  const who = granted.length === 0 ? "" : ` Ask ${article(ROLE_LABELS[granted[0]!])} ${listed(granted.map((r) => ROLE_LABELS[r]))}.`
  const what = row === undefined ? permission : row.description.charAt(0).toLowerCase() + row.description.slice(1)
  return { allowed: false, role, reason: `Your role (${ROLE_LABELS[role]}) does not allow this: ${what}.${who}` }
}

/** The signed-in user's role in an organization: the current store's unless named. */
export const useRole = (organizationId?: string): Role | undefined => {
  const { context, store } = useWorkspace()
  const id = organizationId ?? store?.organization_id
  return context.me.organizations.find((organization) => organization.id === id)?.role
}

/** Whether the user may take an action needing `permission` in the current store's organization (or the one named), and why not. */
export const usePermission = (permission: Permission, organizationId?: string): PermissionAnswer => {
  const { context } = useWorkspace()
  return decide(context.access, useRole(organizationId), permission)
}
