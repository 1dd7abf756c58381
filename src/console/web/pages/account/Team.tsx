/**
 * The organization's team: its members with their roles, the invitations not yet accepted (pending or
 * expired), and, for Owners and Admins, inviting by e-mail and revoking an invitation.
 */
import { useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useId, useState } from "react"
import type { Invitation } from "../../../../../domain/console/Account.ts"
import type { OrganizationId } from "../../../../../domain/Ids.ts"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { Button, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { useWorkspace } from "../../workspace.tsx"

const ROLES = [
  { value: "admin", label: "Administrator", hint: "Everything but the organization's ownership" },
  { value: "developer", label: "Developer", hint: "API keys, webhooks and payments" },
  { value: "analyst", label: "Analyst", hint: "Reads payments and reports" }
] as const
type InvitedRole = (typeof ROLES)[number]["value"]
const roleName = (role: string) => ROLES.find((candidate) => candidate.value === role)?.label ?? (role === "owner" ? "Owner" : role)

export const TeamPage = () => {
  const { context, store } = useWorkspace()
  const organization = context.me.organizations.find((candidate) => candidate.id === store?.organization_id) ?? context.me.organizations[0]!
  const manages = organization.role === "owner" || organization.role === "admin"
  const key = ["team", organization.id] as const
  const team = useConsoleQuery(key, (client) => client.Team({ organization_id: organization.id }))

  return (
    <div className="page">
      <div className="page-header"><h1>Team</h1></div>
      <p className="muted">The people of {organization.name} and what each may do.</p>
      {manages ? <InviteForm organizationId={organization.id} teamKey={key} /> : null}
      {team.isPending ? <Loading /> : null}
      {team.error === null ? null : <div className="alert alert-error" role="alert">{team.error.message}</div>}
      {team.data === undefined ? null : (
        <>
          <section className="card table-card" aria-labelledby="members-title">
            <h2 id="members-title" className="visually-hidden">Members</h2>
            <table className="table">
              <caption className="visually-hidden">Members of {organization.name}</caption>
              <thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Since</th></tr></thead>
              <tbody>
                {team.data.members.map((member) => (
                  <tr key={member.user_id}>
                    <td className="break">{member.name === null ? member.email : <>{member.name}<br /><span className="muted small">{member.email}</span></>}</td>
                    <td>{roleName(member.role)}</td>
                    <td>{formatTime(member.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section className="card table-card" aria-labelledby="invitations-title">
            <h2 id="invitations-title" className="card-title-padded">Invitations</h2>
            {team.data.invitations.length === 0
              ? <Empty title="No pending invitations">{manages ? <p className="muted">Invite a colleague above: they get a link to join.</p> : null}</Empty>
              : (
                <table className="table">
                  <thead>
                    <tr><th scope="col">Invitation</th><th scope="col">Status</th>{manages ? <th scope="col"><span className="visually-hidden">Actions</span></th> : null}</tr>
                  </thead>
                  <tbody>
                    {team.data.invitations.map((invitation) => (
                      <InvitationRow key={invitation.id} invitation={invitation} manages={manages} teamKey={key} />
                    ))}
                  </tbody>
                </table>
              )}
          </section>
        </>
      )}
    </div>
  )
}

const InviteForm = ({ organizationId, teamKey }: { readonly organizationId: OrganizationId; readonly teamKey: ReadonlyArray<string> }) => {
  const queryClient = useQueryClient()
  const roleId = useId()
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<InvitedRole>("developer")
  const [sentTo, setSentTo] = useState<string | undefined>(undefined)
  const invite = useConsoleMutation(
    (client, input: { readonly email: string; readonly role: InvitedRole }) =>
      client.InviteMember({ organization_id: organizationId, email: input.email, role: input.role }),
    {
      onSuccess: (invitation) => {
        setSentTo(invitation.email)
        setEmail("")
        void queryClient.invalidateQueries({ queryKey: teamKey })
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
      <form onSubmit={submit} noValidate>
        <FormError error={invite.error} fields={["email", "role"]} />
        {sentTo === undefined ? null : (
          <div className="alert alert-success" role="status">
            Invitation sent to {sentTo}. They join once they open the link in the mail (valid 7 days).
          </div>
        )}
        <Field label="E-mail" name="email" type="email" value={email} onChange={setEmail} autoComplete="off" error={invite.error} required />
        <div className="field">
          <label htmlFor={roleId}>Role</label>
          <select id={roleId} name="role" value={role} onChange={(event) => setRole(event.target.value as InvitedRole)}>
            {ROLES.map((option) => <option key={option.value} value={option.value}>{option.label} — {option.hint}</option>)}
          </select>
        </div>
        <div><Button kind="primary" type="submit" busy={invite.isPending}>Send invitation</Button></div>
      </form>
    </section>
  )
}

const InvitationRow = (
  { invitation, manages, teamKey }: { readonly invitation: Invitation; readonly manages: boolean; readonly teamKey: ReadonlyArray<string> }
) => {
  const queryClient = useQueryClient()
  const revoke = useConsoleMutation(
    (client, _: void) => client.RevokeInvitation({ organization_id: invitation.organization_id, id: invitation.id }),
    { onSuccess: () => void queryClient.invalidateQueries({ queryKey: teamKey }) }
  )
  return (
    <tr>
      <td className="break">
        {invitation.email}
        <br />
        <span className="muted small">{roleName(invitation.role)} · expires {formatTime(invitation.expires_at)}</span>
        {revoke.error === null ? null : <p className="field-error" role="alert">{revoke.error.message}</p>}
      </td>
      <td>
        <span className={`badge badge-${invitation.status === "pending" ? "pending" : "expired"}`}>
          {invitation.status === "pending" ? "Pending" : "Expired"}
        </span>
      </td>
      {manages
        ? (
          <td className="team-actions">
            <Button kind="ghost" onClick={() => revoke.mutate()} busy={revoke.isPending}>
              Revoke<span className="visually-hidden"> the invitation of {invitation.email}</span>
            </Button>
          </td>
        )
        : null}
    </tr>
  )
}
