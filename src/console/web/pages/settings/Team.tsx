/**
 * Team: invite anyone by e-mail (the mailed link lets them sign in, or sign up, and join with the role
 * chosen), the members with their roles (change one, remove one), the invitations not yet accepted with
 * their status (revoke one), and the table of what each role may do (the server's matrix). Owners and
 * Admins manage the team; everyone else reads it, told why they may not change it.
 */
import { useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { type Role, Roles } from "../../../../../domain/Access.ts"
import type { Member } from "../../../../../domain/Accounts.ts"
import type { Invitation } from "../../../../../domain/console/Account.ts"
import type { OrganizationId } from "../../../../../domain/Ids.ts"
import { ROLE_LABELS, usePermission } from "../../permissions.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { SelectField } from "../../ui/Fields.tsx"
import { useWorkspace } from "../../workspace.tsx"

type AssignableRole = Exclude<Role, "owner">
const ASSIGNABLE: ReadonlyArray<{ readonly value: AssignableRole; readonly label: string }> = [
  { value: "admin", label: "Admin" },
  { value: "developer", label: "Developer" },
  { value: "analyst", label: "Analyst" }
]

const teamKey = (organizationId: string) => ["team", organizationId] as const

export const TeamPage = () => {
  const { context, store } = useWorkspace()
  const organizationId = store!.organization_id
  const organization = context.me.organizations.find((candidate) => candidate.id === organizationId)
  const organizationName = organization?.name ?? "this organization"
  const queryClient = useQueryClient()
  const manage = usePermission("member.manage")
  const team = useConsoleQuery(teamKey(organizationId), (client) => client.Team({ organization_id: organizationId }))
  const refresh = () => void queryClient.invalidateQueries({ queryKey: teamKey(organizationId) })
  const [removing, setRemoving] = useState<Member | undefined>(undefined)
  const changeRole = useConsoleMutation(
    (client, change: { readonly member: Member; readonly role: AssignableRole }) =>
      client.ChangeMemberRole({ organization_id: organizationId, user_id: change.member.user_id, role: change.role }),
    { onSuccess: refresh }
  )
  const remove = useConsoleMutation((client, member: Member) => client.RemoveMember({ organization_id: organizationId, user_id: member.user_id }), {
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
          <p className="muted">Who can work in {organizationName}, and what each role may do.</p>
        </div>
      </div>
      <PermissionNote permission="member.manage" />
      {manage.allowed ? <InviteForm organizationId={organizationId} onInvited={refresh} /> : null}
      {team.error ? <div className="alert alert-error" role="alert">{team.error.message}</div> : null}
      {changeRole.error ? <div className="alert alert-error" role="alert">{changeRole.error.message}</div> : null}
      <section className="card table-card" aria-labelledby="members-title">
        <h2 id="members-title" className="card-title">Members</h2>
        {team.isPending ? <Loading /> : (
          <table className="table">
            <caption className="visually-hidden">Members of {organizationName} and their roles</caption>
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col" className="hide-narrow">Since</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {team.data?.members.map((member) => {
                const fixed = member.role === "owner" || member.user_id === self
                return (
                  <tr key={member.user_id}>
                    <td className="break">
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
      {team.data === undefined ? null : <Invitations invitations={team.data.invitations} canInvite={manage.allowed} onRevoked={refresh} />}
      <RoleTable />
      <Dialog title="Remove member" open={removing !== undefined} onClose={() => setRemoving(undefined)}>
        <div className="dialog-body">
          <FormError error={remove.error} fields={[]} />
          <p>{removing?.email} will no longer see {organizationName} or its stores. Their account stays; you can invite them again later.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setRemoving(undefined)}>Cancel</Button>
          <Button kind="danger" busy={remove.isPending} onClick={() => removing !== undefined && remove.mutate(removing)}>Remove member</Button>
        </footer>
      </Dialog>
    </div>
  )
}

/** Invites an e-mail, with or without an account: the mail's link signs them in, or up, and they join. */
const InviteForm = ({ organizationId, onInvited }: { readonly organizationId: OrganizationId; readonly onInvited: () => void }) => {
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<AssignableRole>("developer")
  const [sentTo, setSentTo] = useState<string | undefined>(undefined)
  const invite = useConsoleMutation(
    (client, input: { readonly email: string; readonly role: AssignableRole }) =>
      client.InviteMember({ organization_id: organizationId, email: input.email, role: input.role }),
    {
      onSuccess: (invitation) => {
        setSentTo(invitation.email)
        setEmail("")
        onInvited()
      }
    }
  )
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSentTo(undefined)
    invite.mutate({ email: email.trim(), role })
  }
  return (
    <section className="card" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a team member</h2>
      <p className="muted small">
        They get an e-mail with a link to join: they sign in if they already have an account, or create one. The link works for 7 days.
      </p>
      {sentTo === undefined
        ? null
        : <div className="alert alert-success" role="status">Invitation sent to {sentTo}. They appear under Members once they accept it.</div>}
      <form className="inline-form" onSubmit={submit} noValidate>
        <FormError error={invite.error} fields={["email", "role"]} />
        <Field label="E-mail" name="email" type="email" value={email} onChange={setEmail} error={invite.error} autoComplete="off" required />
        <SelectField label="Role" name="role" value={role} onChange={setRole} options={ASSIGNABLE} error={invite.error} />
        <div className="inline-form-submit"><Button kind="primary" type="submit" busy={invite.isPending}>Send invitation</Button></div>
      </form>
    </section>
  )
}

const Invitations = (
  { canInvite, invitations, onRevoked }: {
    readonly invitations: ReadonlyArray<Invitation>
    readonly canInvite: boolean
    readonly onRevoked: () => void
  }
) => (
  <section className="card table-card" aria-labelledby="invitations-title">
    <h2 id="invitations-title" className="card-title">Invitations</h2>
    {invitations.length === 0
      ? <Empty title="No pending invitations">{canInvite ? <p className="muted">Invite a colleague above: they get a link to join.</p> : null}</Empty>
      : (
        <table className="table">
          <caption className="visually-hidden">Invitations not yet accepted</caption>
          <thead>
            <tr>
              <th scope="col">Invitation</th>
              <th scope="col">Status</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {invitations.map((invitation) => <InvitationRow key={invitation.id} invitation={invitation} onRevoked={onRevoked} />)}
          </tbody>
        </table>
      )}
  </section>
)

const InvitationRow = ({ invitation, onRevoked }: { readonly invitation: Invitation; readonly onRevoked: () => void }) => {
  const revoke = useConsoleMutation(
    (client, _: void) => client.RevokeInvitation({ organization_id: invitation.organization_id, id: invitation.id }),
    { onSuccess: onRevoked }
  )
  const pending = invitation.status === "pending"
  return (
    <tr>
      <td className="break">
        {invitation.email}
        <br />
        <span className="muted small">
          {ROLE_LABELS[invitation.role]} · {pending ? "expires" : "expired"} {formatTime(invitation.expires_at)}
        </span>
        {revoke.error === null ? null : <p className="field-error" role="alert">{revoke.error.message}</p>}
      </td>
      <td><span className={`badge badge-${invitation.status}`}>{pending ? "Pending" : "Expired"}</span></td>
      <td className="row-actions">
        <PermittedButton permission="member.manage" kind="ghost" onClick={() => revoke.mutate()} busy={revoke.isPending}>
          Revoke<span className="visually-hidden"> the invitation of {invitation.email}</span>
        </PermittedButton>
      </td>
    </tr>
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
