/**
 * Team: the members of the current store's organization with their roles; add a registered user by e-mail,
 * change a member's role, remove a member; and the table of what each role may do (the server's matrix).
 */
import { useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { type Role, Roles } from "../../../../../domain/Access.ts"
import type { Member } from "../../../../../domain/Accounts.ts"
import { ROLE_LABELS, usePermission } from "../../permissions.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { SelectField } from "../../ui/SelectField.tsx"
import { useWorkspace } from "../../workspace.tsx"

type AssignableRole = Exclude<Role, "owner">
const ASSIGNABLE: ReadonlyArray<{ readonly value: AssignableRole; readonly label: string }> = [
  { value: "admin", label: "Admin" },
  { value: "developer", label: "Developer" },
  { value: "analyst", label: "Analyst" }
]

export const TeamPage = () => {
  const { context, store } = useWorkspace()
  const organizationId = store!.organization_id
  const organization = context.me.organizations.find((candidate) => candidate.id === organizationId)
  const queryClient = useQueryClient()
  const manage = usePermission("member.manage")
  const members = useConsoleQuery(["members", organizationId], (client) => client.ListMembers({ organization_id: organizationId as never }))
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["members", organizationId] })
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<AssignableRole>("developer")
  const [added, setAdded] = useState<Member | undefined>(undefined)
  const [removing, setRemoving] = useState<Member | undefined>(undefined)
  const add = useConsoleMutation((client, _: void) => client.AddMember({ organization_id: organizationId as never, email: email.trim(), role }), {
    onSuccess: (member) => {
      setAdded(member)
      setEmail("")
      refresh()
    }
  })
  const changeRole = useConsoleMutation(
    (client, change: { readonly member: Member; readonly role: AssignableRole }) =>
      client.ChangeMemberRole({ organization_id: organizationId as never, user_id: change.member.user_id, role: change.role }),
    { onSuccess: refresh }
  )
  const remove = useConsoleMutation((client, member: Member) => client.RemoveMember({ organization_id: organizationId as never, user_id: member.user_id }), {
    onSuccess: () => {
      setRemoving(undefined)
      refresh()
    }
  })
  const self = context.me.user.id

  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Team</h1>
          <p className="muted">Who can work in {organization?.name ?? "this organization"}, and what each role may do.</p>
        </div>
      </div>
      <PermissionNote permission="member.manage" />
      {manage.allowed
        ? (
          <section className="card" aria-labelledby="invite-title">
            <h2 id="invite-title">Add a member</h2>
            <p className="muted small">They need an account already; they are told by e-mail and see the organization when they next sign in.</p>
            {added === undefined ? null : <div className="alert alert-success" role="status">{added.email} is now a member as {ROLE_LABELS[added.role]}.</div>}
            <form className="inline-form" onSubmit={(event) => {
              event.preventDefault()
              setAdded(undefined)
              add.mutate()
            }} noValidate>
              <FormError error={add.error} fields={["email", "role"]} />
              <Field label="E-mail" name="email" type="email" value={email} onChange={setEmail} error={add.error} autoComplete="off" required />
              <SelectField label="Role" name="role" value={role} onChange={setRole} options={ASSIGNABLE} error={add.error} />
              <div className="inline-form-submit"><Button kind="primary" type="submit" busy={add.isPending}>Add member</Button></div>
            </form>
          </section>
        )
        : null}
      {members.error ? <div className="alert alert-error" role="alert">{members.error.message}</div> : null}
      {changeRole.error ? <div className="alert alert-error" role="alert">{changeRole.error.message}</div> : null}
      <section className="card table-card" aria-labelledby="members-title">
        <h2 id="members-title" className="card-title">Members</h2>
        {members.isPending ? <Loading /> : (
          <table className="table">
            <caption className="visually-hidden">Members and their roles</caption>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col" className="hide-narrow">Since</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {members.data?.data.map((member) => {
                const fixed = member.role === "owner" || member.user_id === self
                return (
                  <tr key={member.user_id}>
                    <td>
                      <div>{member.name ?? member.email}{member.user_id === self ? <span className="muted"> (you)</span> : null}</div>
                      {member.name === null ? null : <div className="muted small">{member.email}</div>}
                    </td>
                    <td>
                      {fixed || !manage.allowed
                        ? <span className="badge badge-role">{ROLE_LABELS[member.role]}</span>
                        : (
                          <select
                            aria-label={`Role of ${member.email}`}
                            value={member.role}
                            disabled={changeRole.isPending}
                            onChange={(event) => changeRole.mutate({ member, role: event.target.value as AssignableRole })}
                          >
                            {ASSIGNABLE.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
                          </select>
                        )}
                    </td>
                    <td className="hide-narrow nowrap">{formatTime(member.created_at)}</td>
                    <td className="row-actions">
                      {fixed ? null : (
                        <PermittedButton permission="member.manage" kind="ghost" onClick={() => setRemoving(member)}>
                          Remove<span className="visually-hidden"> {member.email}</span>
                        </PermittedButton>
                      )}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        )}
      </section>
      <RoleTable />
      <Dialog title="Remove member" open={removing !== undefined} onClose={() => setRemoving(undefined)}>
        <div className="dialog-body">
          <FormError error={remove.error} fields={[]} />
          <p>{removing?.email} will no longer see {organization?.name ?? "this organization"} or its stores. Their account stays; you can add them again later.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setRemoving(undefined)}>Cancel</Button>
          <Button kind="danger" busy={remove.isPending} onClick={() => removing !== undefined && remove.mutate(removing)}>Remove member</Button>
        </footer>
      </Dialog>
    </div>
  )
}

/** What each role may do: the server's access matrix, permission by permission. */
const RoleTable = () => {
  const { context } = useWorkspace()
  return (
    // Wider than a phone: the region scrolls sideways, so it takes the focus for keyboard scrolling.
    <section className="card table-card" aria-labelledby="roles-title" tabIndex={0}>
      <h2 id="roles-title" className="card-title">What each role may do</h2>
      <table className="table role-table">
        <caption className="visually-hidden">Permissions granted to each role</caption>
        <thead>
          <tr>
            <th scope="col">Permission</th>
            {Roles.map((role) => <th key={role} scope="col" className="center">{ROLE_LABELS[role]}</th>)}
          </tr>
        </thead>
        <tbody>
          {context.access.map((row) => (
            <tr key={row.permission}>
              <th scope="row" className="role-permission">
                {row.description}
                <div className="muted small mono">{row.permission}</div>
              </th>
              {Roles.map((role) => (
                <td key={role} className="center">
                  {row.roles[role]
                    ? <><span className="granted" aria-hidden="true">✓</span><span className="visually-hidden">Allowed</span></>
                    : <><span className="denied" aria-hidden="true">—</span><span className="visually-hidden">Not allowed</span></>}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
