/**
 * The join page a share link leads to: the store's branding, who invites, and how to join. It uses the
 * checkout's layout (same escaping and nonce Content-Security-Policy) and runs no script.
 */
import type { ReferralInvite } from "../../domain/Referrals.ts"
import { escapeHtml, page } from "../platform/Html.ts"

const INVITE_STYLES = `<style>
  .code { font-size: 2rem; font-weight: 700; letter-spacing: .15em; margin: 12px 0; }
  .caption { color: #556; margin: 0 0 12px; font-size: .95rem; }
</style>`

export const invitePage = (invite: ReferralInvite) => {
  const name = invite.store.branding.display_name ?? invite.store.name
  return page({
    title: `You're invited · ${name}`,
    merchant: {
      name,
      logo_url: invite.store.branding.logo_url,
      primary_color: invite.store.branding.primary_color,
      accent_color: invite.store.branding.accent_color
    },
    body: `${INVITE_STYLES}
  <p class="caption">${invite.referrer.name === null ? "A friend" : escapeHtml(invite.referrer.name)} invites you to ${escapeHtml(name)}</p>
  <p class="code" id="code">${escapeHtml(invite.code)}</p>
  <p class="caption" id="how-to-join">${escapeHtml(invite.how_to_join)}</p>`
  })
}
