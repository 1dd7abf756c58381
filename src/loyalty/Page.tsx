/**
 * The hosted wallet page: the store's branding, the balance, the tier and the progress to the next, the
 * rewards the points can buy, the customer's own vouchers, recent activity, and links to the store's games
 * (carrying the customer's token) and to the customer's referral page. It runs no script.
 */
import type { ReactNode } from "react"
import type { Wallet } from "../../domain/Loyalty.ts"
import { HostedPage, useCopy } from "../platform/pages/Document.tsx"
import { POINTS_REDEMPTION_LABEL } from "./View.ts"

const WALLET_STYLES = `
  .balance { font-size: 2.4rem; font-weight: 700; margin: 8px 0 0; font-variant-numeric: tabular-nums; }
  .caption { color: #556; margin: 0 0 12px; font-size: .9rem; }
  .tier { display: inline-block; padding: 4px 12px; border-radius: 999px; background: var(--accent); color: var(--primary);
          font-weight: 600; }
  .progress { height: 8px; border-radius: 4px; background: #e6e8ee; overflow: hidden; margin: 10px 0 4px; }
  .progress > div { height: 100%; background: var(--primary); }
  h2 { font-size: 1rem; margin: 20px 0 8px; text-align: left; }
  ul { list-style: none; padding: 0; margin: 0; text-align: left; }
  li { display: flex; justify-content: space-between; gap: 12px; padding: 8px 0; border-bottom: 1px solid #eef0f4; }
  li > :first-child { overflow-wrap: anywhere; min-width: 0; }
  li > span:last-child { font-weight: 600; white-space: nowrap; }
  .empty { color: #556; font-size: .9rem; text-align: left; margin: 0; overflow-wrap: anywhere; }
  .code { font-family: ui-monospace, monospace; letter-spacing: .06em; }
  a { color: var(--primary); font-weight: 600; }
`

const signed = (points: string, value: number) => (value > 0 ? `+${points}` : points)

/** Progress toward the next tier, from the current tier's threshold (or zero). */
const TierProgress = ({ wallet }: { readonly wallet: Wallet }) => {
  const copy = useCopy()
  if (wallet.next_tier === null) return null
  const from = wallet.tier?.threshold ?? 0
  const span = Math.max(1, wallet.next_tier.threshold - from)
  const percent = Math.min(100, Math.max(0, Math.floor(((wallet.lifetime_points - from) * 100) / span)))
  return (
    <>
      <div className="progress" role="progressbar" aria-labelledby="next-tier" aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100}>
        <div style={{ width: `${percent}%` }}></div>
      </div>
      <p className="caption" id="next-tier">
        {copy.text("wallet.to_next_tier", { points: wallet.next_tier.points_needed, tier: wallet.next_tier.name })}
      </p>
    </>
  )
}

const List = <A,>(props: {
  readonly items: ReadonlyArray<A>
  readonly empty?: string
  readonly row: (item: A, index: number) => ReactNode
}) =>
  props.items.length === 0
    ? props.empty === undefined ? null : <p className="empty">{props.empty}</p>
    : <ul>{props.items.map(props.row)}</ul>

const WalletView = ({ wallet }: { readonly wallet: Wallet }) => {
  const copy = useCopy()
  const name = wallet.store.branding.display_name ?? wallet.store.name
  return (
    <HostedPage
      title={copy.text("wallet.title", { store: name })}
      branding={{
        name,
        logo_url: wallet.store.branding.logo_url,
        primary_color: wallet.store.branding.primary_color,
        accent_color: wallet.store.branding.accent_color
      }}
      styles={WALLET_STYLES}
    >
      {wallet.customer.name === null ? null : <p className="caption" id="customer">{wallet.customer.name}</p>}
      <p className="balance" id="balance">{copy.number(wallet.points_balance)}</p>
      <p className="caption">{copy.text("wallet.points", { count: wallet.points_balance })}</p>
      {wallet.tier === null ? null : <span className="tier" id="tier">{wallet.tier.name}</span>}
      <TierProgress wallet={wallet} />
      <h2>{copy.text("wallet.rewards")}</h2>
      <List
        items={wallet.rewards}
        empty={copy.text("wallet.no_rewards")}
        row={(reward) => (
          <li className="reward" key={reward.id}>
            <span>{reward.name}</span>
            <span>{copy.text("wallet.points_cost", { points: reward.points_cost })}</span>
          </li>
        )}
      />
      {wallet.vouchers.length === 0 ? null : (
        <>
          <h2>{copy.text("wallet.vouchers")}</h2>
          <List
            items={wallet.vouchers}
            row={(voucher) => (
              <li className="voucher" key={voucher.code}>
                <span>{voucher.label === POINTS_REDEMPTION_LABEL ? copy.text("wallet.voucher.points") : voucher.label}</span>
                <span className="code">{voucher.code}</span>
              </li>
            )}
          />
        </>
      )}
      <h2>{copy.text("wallet.activity")}</h2>
      <List
        items={wallet.recent_entries}
        empty={copy.text("wallet.no_activity")}
        row={(entry, index) => (
          <li className="entry" key={index}>
            <span>{copy.text(`wallet.entry.${entry.type}`)} · {copy.date(entry.created_at)}</span>
            <span>{signed(copy.number(entry.points), entry.points)}</span>
          </li>
        )}
      />
      {wallet.games.length === 0 ? null : (
        <>
          <h2>{copy.text("wallet.play")}</h2>
          <List
            items={wallet.games}
            row={(game) => (
              <li className="game" key={game.play_url}>
                <a href={game.play_url}>{game.name}</a>
                <span>{copy.text(game.type === "spin" ? "game.type.spin" : "game.type.lucky_draw")}</span>
              </li>
            )}
          />
        </>
      )}
      {wallet.referral === null ? null : (
        <>
          <h2>{copy.text("wallet.invite")}</h2>
          <p className="empty" id="referral">
            {copy.rich("wallet.share_code", {
              code: wallet.referral.code,
              url: wallet.referral.share_url,
              mono: (chunks) => <span className="code">{chunks}</span>,
              link: (chunks) => <a href={wallet.referral!.share_url}>{chunks}</a>
            })}
          </p>
        </>
      )}
    </HostedPage>
  )
}

export const walletPage = (wallet: Wallet) => <WalletView wallet={wallet} />
