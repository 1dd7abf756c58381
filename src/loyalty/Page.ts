/**
 * The hosted wallet page: the store's branding, the balance, the tier and the progress to the next, the
 * rewards the points can buy, the customer's own vouchers, recent activity, and links to the store's games
 * (carrying the customer's token) and to the customer's referral page. It uses the checkout's layout, so the
 * same escaping and nonce Content-Security-Policy apply; it runs no script at all.
 */
import type { Wallet } from "../../domain/Loyalty.ts"
import { escapeHtml, page } from "../platform/Html.ts"

// The layout's styles cover the checkout; these add the wallet's parts. `style-src 'unsafe-inline'` allows them.
const WALLET_STYLES = `<style>
  .balance { font-size: 2.4rem; font-weight: 700; margin: 8px 0 0; }
  .caption { color: #556; margin: 0 0 12px; font-size: .9rem; }
  .tier { display: inline-block; padding: 4px 12px; border-radius: 999px; background: var(--accent); color: var(--primary);
          font-weight: 600; }
  .progress { height: 8px; border-radius: 4px; background: #e6e8ee; overflow: hidden; margin: 10px 0 4px; }
  .progress > div { height: 100%; background: var(--primary); }
  h2 { font-size: 1rem; margin: 20px 0 8px; text-align: left; }
  ul { list-style: none; padding: 0; margin: 0; text-align: left; }
  li { display: flex; justify-content: space-between; gap: 12px; padding: 8px 0; border-bottom: 1px solid #eef0f4; }
  li span:last-child { font-weight: 600; white-space: nowrap; }
  .empty { color: #556; font-size: .9rem; text-align: left; margin: 0; }
  .code { font-family: ui-monospace, monospace; letter-spacing: .06em; }
  a { color: var(--primary); font-weight: 600; }
</style>`

const signed = (points: number) => (points > 0 ? `+${points}` : String(points))

/** Progress toward the next tier, from the current tier's threshold (or zero). */
const progressBar = (wallet: Wallet) => {
  if (wallet.next_tier === null) return ""
  const from = wallet.tier?.threshold ?? 0
  const span = Math.max(1, wallet.next_tier.threshold - from)
  const percent = Math.min(100, Math.max(0, Math.floor(((wallet.lifetime_points - from) * 100) / span)))
  return `<div class="progress" role="progressbar" aria-labelledby="next-tier" aria-valuenow="${percent}" aria-valuemin="0" aria-valuemax="100">` +
    `<div style="width: ${percent}%"></div></div>
  <p class="caption" id="next-tier">${wallet.next_tier.points_needed} points to ${escapeHtml(wallet.next_tier.name)}</p>`
}

const list = <A>(items: ReadonlyArray<A>, empty: string, row: (item: A) => string) =>
  items.length === 0 ? `<p class="empty">${escapeHtml(empty)}</p>` : `<ul>${items.map(row).join("")}</ul>`

export const walletPage = (wallet: Wallet) =>
  page({
    title: `Your points · ${wallet.store.branding.display_name ?? wallet.store.name}`,
    merchant: {
      name: wallet.store.branding.display_name ?? wallet.store.name,
      logo_url: wallet.store.branding.logo_url,
      primary_color: wallet.store.branding.primary_color,
      accent_color: wallet.store.branding.accent_color
    },
    body: `${WALLET_STYLES}
  ${wallet.customer.name === null ? "" : `<p class="caption" id="customer">${escapeHtml(wallet.customer.name)}</p>`}
  <p class="balance" id="balance">${wallet.points_balance}</p>
  <p class="caption">points</p>
  ${wallet.tier === null ? "" : `<span class="tier" id="tier">${escapeHtml(wallet.tier.name)}</span>`}
  ${progressBar(wallet)}
  <h2>Rewards</h2>
  ${
      list(wallet.rewards, "No rewards yet.", (reward) =>
        `<li class="reward"><span>${escapeHtml(reward.name)}</span><span>${reward.points_cost} pts</span></li>`)
    }
  ${
      wallet.vouchers.length === 0 ? "" : `<h2>Your vouchers</h2>
  ${
        list(wallet.vouchers, "", (voucher) =>
          `<li class="voucher"><span>${escapeHtml(voucher.label)}</span><span class="code">${escapeHtml(voucher.code)}</span></li>`)
      }`
    }
  <h2>Recent activity</h2>
  ${
      list(wallet.recent_entries, "No activity yet.", (entry) =>
        `<li class="entry"><span>${escapeHtml(entry.label)} · ${escapeHtml(entry.created_at.slice(0, 10))}</span>` +
        `<span>${signed(entry.points)}</span></li>`)
    }
  ${
      wallet.games.length === 0 ? "" : `<h2>Play</h2>
  ${
        list(wallet.games, "", (game) =>
          `<li class="game"><a href="${escapeHtml(game.play_url)}">${escapeHtml(game.name)}</a>` +
          `<span>${game.type === "spin" ? "Spin" : "Draw"}</span></li>`)
      }`
    }
  ${
      wallet.referral === null ? "" : `<h2>Invite friends</h2>
  <p class="empty" id="referral">Share your code <span class="code">${escapeHtml(wallet.referral.code)}</span>: ` +
        `<a href="${escapeHtml(wallet.referral.share_url)}">${escapeHtml(wallet.referral.share_url)}</a></p>`
    }`
  })
