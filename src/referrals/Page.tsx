/**
 * The join page a share link leads to: the store's branding, who invites, and how to join. It runs no script.
 */
import type { ReferralInvite } from "../../domain/Referrals.ts"
import { HostedPage, useCopy } from "../platform/pages/Document.tsx"

const INVITE_STYLES = `
  .code { font-size: 2rem; font-weight: 700; letter-spacing: .15em; margin: 12px 0; overflow-wrap: anywhere; }
  .caption { color: #556; margin: 0 0 12px; font-size: .95rem; overflow-wrap: anywhere; }
`

const Invite = ({ invite }: { readonly invite: ReferralInvite }) => {
  const copy = useCopy()
  const store = invite.store.branding.display_name ?? invite.store.name
  return (
    <HostedPage
      title={copy.text("invite.title", { store })}
      branding={{
        name: store,
        logo_url: invite.store.branding.logo_url,
        primary_color: invite.store.branding.primary_color,
        accent_color: invite.store.branding.accent_color
      }}
      styles={INVITE_STYLES}
    >
      <p className="caption" id="invited-by">
        {invite.referrer.name === null
          ? copy.text("invite.from_friend", { store })
          : copy.text("invite.from", { referrer: invite.referrer.name, store })}
      </p>
      <p className="code" id="code">{invite.code}</p>
      <p className="caption" id="how-to-join">
        {invite.referee_points > 0
          ? copy.text("invite.how_to_join_points", { code: invite.code, store, points: invite.referee_points })
          : copy.text("invite.how_to_join", { code: invite.code, store })}
      </p>
    </HostedPage>
  )
}

export const invitePage = (invite: ReferralInvite) => <Invite invite={invite} />
