/**
 * A game: its state with activate / pause / end, its figures (plays, wins, inventory left) following the
 * plays as they happen, its prizes with their odds, scratch cards issued to a customer, the recent plays,
 * and its fairness: the seed commitment from the start and, once the game has ended, the disclosed seed
 * with "Verify every draw", which re-runs each draw here in the browser (domain/Games.ts `verifyGame`).
 */
import { useQueryClient } from "@tanstack/react-query"
import { Effect } from "effect"
import { useId, useState } from "react"
import type { FairnessReport } from "../../../../../domain/GameFairness.ts"
import { type Game, verifyGame } from "../../../../../domain/Games.ts"
import type { GameDrawRecord } from "../../../../../domain/console/Games.ts"
import { Link } from "../../router.tsx"
import { callConsole, type ConsoleFailure, useConsoleMutation, useConsoleQuery, useLiveFeed } from "../../rpc.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { ErrorNotice, formatPercent } from "../../ui/Forms.tsx"
import { CustomerName } from "../engagement/CustomerName.tsx"
import { useDebounced } from "../engagement/useDebounced.ts"
import { useWorkspace } from "../../workspace.tsx"
import { GameStateBadge, gameState, gameTypeLabel, oddsOf } from "./Games.tsx"

export const GameDetailPage = ({ id }: { readonly id: string }) => {
  const gameId = id as Game["id"]
  const queryClient = useQueryClient()
  const game = useConsoleQuery(["game", gameId], (client) => client.GetGame({ id: gameId }))
  const stats = useConsoleQuery(["game-stats", gameId], (client) => client.GameStats({ id: gameId }))
  const plays = useConsoleQuery(["game-plays", gameId], (client) => client.ListGamePlays({ id: gameId, limit: 10 }))
  const [ending, setEnding] = useState(false)

  // Each play recorded moves the figures and the list of plays.
  useLiveFeed(`game:${gameId}`, (client) => client.GamePlaysFeed({ game_id: gameId }), () => {
    void queryClient.invalidateQueries({ queryKey: ["game-stats", gameId] })
    void queryClient.invalidateQueries({ queryKey: ["game-plays", gameId] })
  })

  const refresh = (updated: Game) => {
    queryClient.setQueryData(["game", gameId], updated)
    void queryClient.invalidateQueries({ queryKey: ["games"] })
    void queryClient.invalidateQueries({ queryKey: ["game-stats", gameId] })
  }
  const setActive = useConsoleMutation((client, active: boolean) => client.UpdateGame({ id: gameId, active }), { onSuccess: refresh })
  const end = useConsoleMutation((client, _: void) => client.UpdateGame({ id: gameId, ends_at: new Date() }), {
    onSuccess: (updated) => {
      setEnding(false)
      refresh(updated)
    }
  })

  if (game.isPending) return <div className="page"><Loading /></div>
  if (game.data === undefined) {
    return (
      <div className="page">
        <p className="breadcrumb"><Link to="/games">← Games</Link></p>
        <ErrorNotice error={game.error} />
      </div>
    )
  }
  const current = game.data
  const state = gameState(current).label
  const closed = state === "Ended" || state === "Deleted"
  const prizeStats = new Map((stats.data?.prizes ?? []).map((prize) => [prize.prize_id, prize]))
  const odds = oddsOf(current.prizes.map((prize) => ({
    weight: prize.weight,
    active: prize.active,
    left: prizeStats.get(prize.id)?.inventory_left ?? (prize.inventory === null ? null : prize.inventory - prize.awarded)
  })))

  return (
    <div className="page">
      <p className="breadcrumb"><Link to="/games">← Games</Link></p>
      <div className="page-header">
        <div>
          <p className="muted">{gameTypeLabel(current.type)} · <span className="mono">{current.id}</span></p>
          <h1>{current.name} <GameStateBadge game={current} /></h1>
        </div>
        {closed ? null : (
          <div className="actions">
            {current.active
              ? <PermittedButton permission="marketing.manage" onClick={() => setActive.mutate(false)} busy={setActive.isPending}>Pause</PermittedButton>
              : <PermittedButton permission="marketing.manage" kind="primary" onClick={() => setActive.mutate(true)} busy={setActive.isPending}>Activate</PermittedButton>}
            <PermittedButton permission="marketing.manage" kind="danger" onClick={() => setEnding(true)}>End game</PermittedButton>
          </div>
        )}
      </div>
      <PermissionNote permission="marketing.manage" />
      <ErrorNotice error={setActive.error} />
      {state === "Paused" ? <div className="alert alert-warning" role="note">Paused: customers see the game but cannot play it. Activate it when its odds are right.</div> : null}

      <section className="metrics" aria-label="Game figures">
        <Metric label="Plays" value={stats.data?.plays} />
        <Metric label="Wins" value={stats.data?.wins} />
        <Metric label="Win rate" value={stats.data === undefined ? undefined : formatPercent(stats.data.plays === 0 ? null : stats.data.win_rate)} />
        <Metric label="Cards not yet revealed" value={stats.data?.issued} />
      </section>

      <section className="card table-card" aria-labelledby="prizes-title">
        <div className="card-header"><h2 id="prizes-title">Prizes {closed ? null : <span className="live-dot" aria-label="Live">Live</span>}</h2></div>
        {current.prizes.length === 0 ? <Empty title="No prizes" /> : (
          <table className="table">
            <caption className="visually-hidden">Prizes in draw order, with their odds now</caption>
            <thead>
              <tr>
                <th scope="col">Prize</th>
                <th scope="col">Odds</th>
                <th scope="col">Won</th>
                <th scope="col">Left</th>
                <th scope="col" className="hide-narrow">Weight</th>
              </tr>
            </thead>
            <tbody>
              {current.prizes.map((prize, index) => {
                const figures = prizeStats.get(prize.id)
                return (
                  <tr key={prize.id} data-prize={prize.name}>
                    <td>
                      {prize.name}
                      <span className="muted small"> · {prize.kind === "points" ? `${prize.points} points` : prize.kind === "voucher" ? "voucher" : "no prize"}</span>
                      {prize.active ? null : <span className="badge badge-expired"> Removed</span>}
                    </td>
                    <td>{formatPercent(odds[index] ?? 0)}</td>
                    <td data-awarded>{figures?.awarded ?? prize.awarded}</td>
                    <td>{(figures?.inventory_left ?? (prize.inventory === null ? null : prize.inventory - prize.awarded)) ?? "Unlimited"}</td>
                    <td className="hide-narrow">{prize.weight}</td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        )}
      </section>

      <div className="two-columns">
        <FairnessCard game={current} />
        {current.type === "scratch" && !closed ? <ScratchCardForm gameId={gameId} /> : <PublicPageCard game={current} />}
      </div>

      <section className="card table-card" aria-labelledby="plays-title">
        <div className="card-header"><h2 id="plays-title">Recent plays</h2></div>
        <ErrorNotice error={plays.error} />
        {plays.isPending ? <Loading /> : (plays.data?.data.length ?? 0) === 0
          ? <Empty title="No plays yet"><p>Plays appear here as customers play.</p></Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">The latest plays, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Result</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">Customer</th>
                  <th scope="col" className="hide-narrow">Time</th>
                </tr>
              </thead>
              <tbody>
                {plays.data!.data.map((play) => (
                  <tr key={play.id} data-play-id={play.id}>
                    <td>{play.status === "issued" ? "Not revealed yet" : play.prize === null ? "No prize left" : play.prize.name}{play.voucher_code === undefined ? null : <span className="mono small"> {play.voucher_code}</span>}</td>
                    <td><span className="badge">{play.status === "issued" ? "Card issued" : play.status === "revealed" ? "Card revealed" : "Played"}</span></td>
                    <td className="hide-narrow small"><CustomerName id={play.customer_id} /></td>
                    <td className="hide-narrow nowrap">{formatTime(play.revealed_at ?? play.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
      </section>

      <Dialog title="End this game" open={ending} onClose={() => setEnding(false)}>
        <div className="dialog-body">
          <FormError error={end.error} fields={[]} />
          <p>Customers can no longer play <strong>{current.name}</strong>. Its secret seed is disclosed, so anyone can check every draw against the commitment published at the start.</p>
          <p className="muted">This cannot be undone.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={() => setEnding(false)}>Cancel</Button>
          <Button kind="danger" busy={end.isPending} onClick={() => end.mutate()}>End game</Button>
        </footer>
      </Dialog>
    </div>
  )
}

const Metric = ({ label, value }: { readonly label: string; readonly value: number | string | undefined }) => (
  <div className="metric">
    <h2 className="metric-label">{label}</h2>
    <p className="metric-value" data-metric={label}>{value ?? "—"}</p>
  </div>
)

/** Re-runs every draw of the record from its seed, here in the browser. */
const verifyRecord = (record: GameDrawRecord): Promise<FairnessReport> =>
  Effect.runPromise(verifyGame({
    seed: record.seed!,
    seedCommitment: record.seed_commitment,
    tables: record.tables,
    plays: record.plays.map((play) => ({ id: play.id, prizeId: play.prize_id, version: play.version }))
  }))

const FairnessCard = ({ game }: { readonly game: Game }) => {
  const [report, setReport] = useState<FairnessReport | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const [failure, setFailure] = useState<string | undefined>(undefined)
  const verify = async () => {
    setBusy(true)
    setFailure(undefined)
    setReport(undefined)
    try {
      const record = await callConsole((client) => client.GameDrawRecord({ id: game.id }))
      if (record.seed === null) setFailure("The seed is not disclosed yet: it is, the moment the game's end time has passed.")
      else setReport(await verifyRecord(record))
    } catch (error) {
      setFailure((error as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <section className="card" aria-labelledby="fairness-title">
      <h2 id="fairness-title">Provable fairness</h2>
      <p className="muted small">Every draw is HMAC-SHA256(seed, play id). The seed's SHA-256 was published when the game was created; the seed itself is disclosed when the game ends.</p>
      <dl className="details">
        <dt>Commitment</dt><dd className="mono break">{game.seed_commitment}</dd>
        <dt>Seed</dt><dd className="mono break" data-seed>{game.seed ?? "Disclosed when the game ends"}</dd>
      </dl>
      {game.seed === null ? null : (
        <div>
          <Button kind="primary" onClick={() => void verify()} busy={busy}>Verify every draw</Button>
        </div>
      )}
      {failure === undefined ? null : <div className="alert alert-error" role="alert">{failure}</div>}
      {report === undefined ? null : report.valid
        ? (
          <div className="alert alert-success" role="status" data-verified="true">
            All {report.plays} {report.plays === 1 ? "draw" : "draws"} verified in your browser: the seed matches the commitment and every draw landed on the prize recorded.
          </div>
        )
        : (
          <div className="alert alert-error" role="alert" data-verified="false">
            {report.commitmentMatches ? null : <p>The seed does not match the commitment.</p>}
            {report.mismatches.length === 0 ? null : (
              <>
                <p>{report.mismatches.length} of {report.plays} draws differ from the recorded prize:</p>
                <ul>{report.mismatches.map((mismatch) => <li key={mismatch.playId} className="mono small">{mismatch.playId}: recorded {mismatch.recorded ?? "nothing"}, recomputed {mismatch.recomputed ?? "nothing"}</li>)}</ul>
              </>
            )}
          </div>
        )}
    </section>
  )
}

/** Where customers play: the public game page, opened with each customer's own link from their wallet. */
const PublicPageCard = ({ game }: { readonly game: Game }) => {
  const url = `${window.location.origin}/play/game/${game.id}`
  return (
    <section className="card" aria-labelledby="public-title">
      <h2 id="public-title">Public page</h2>
      <p className="muted small">Customers find the game in their wallet, which opens this page with their own link, so only they can play for themselves.</p>
      <p><a className="mono break" href={url} target="_blank" rel="noreferrer">{url}</a></p>
    </section>
  )
}

/** How a customer is offered in the picker: their name and e-mail, as the merchant knows them. */
const customerLabel = (customer: { readonly id: string; readonly name: string | null; readonly email: string | null; readonly external_id: string | null }) =>
  [customer.name, customer.email === null ? null : `<${customer.email}>`, customer.name === null && customer.email === null ? customer.external_id ?? customer.id : null]
    .filter((part) => part !== null).join(" ")

const ScratchCardForm = ({ gameId }: { readonly gameId: Game["id"] }) => {
  const queryClient = useQueryClient()
  const { livemode, store } = useWorkspace()
  const storeId = store!.id
  const listId = useId()
  // The customer is found by name, e-mail or external id as typed (an id pasted in works too).
  const [typed, setTyped] = useState("")
  const search = useDebounced(typed.trim(), 250)
  const byId = /^cus_\w+$/.test(search)
  const matches = useConsoleQuery(["customers", storeId, livemode, "pick", search], (client) =>
    client.SearchCustomers({ store_id: storeId, livemode, limit: 8, search }), { enabled: search.length >= 2 && !byId })
  const offered = matches.data?.data ?? []
  const picked = byId
    ? typed.trim()
    : offered.find((customer) => customerLabel(customer) === typed.trim())?.id ?? (offered.length === 1 ? offered[0]!.id : undefined)
  const issue = useConsoleMutation((client, _: void) => client.IssueScratchCard({ id: gameId, customer_id: (picked ?? "") as never }), {
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["game-plays", gameId] })
      void queryClient.invalidateQueries({ queryKey: ["game-stats", gameId] })
    }
  })
  const [unpicked, setUnpicked] = useState(false)
  const fieldError = unpicked ? { param: "customer_id", message: "Pick a customer from the list (type at least two letters of their name or e-mail)." } as ConsoleFailure : issue.error
  return (
    <section className="card" aria-labelledby="issue-title">
      <h2 id="issue-title">Issue a scratch card</h2>
      <form onSubmit={(event) => {
        event.preventDefault()
        setUnpicked(picked === undefined)
        if (picked !== undefined) issue.mutate()
      }} noValidate>
        <FormError error={fieldError} fields={["customer_id"]} />
        <div className={`field${fieldError?.param === "customer_id" ? " field-invalid" : ""}`}>
          <label htmlFor={`${listId}-input`}>Customer</label>
          <input
            id={`${listId}-input`}
            name="customer_id"
            list={listId}
            value={typed}
            autoComplete="off"
            placeholder="Name, e-mail or external id"
            aria-invalid={fieldError?.param === "customer_id" ? true : undefined}
            aria-describedby={`${listId}-note`}
            onChange={(event) => {
              setTyped(event.target.value)
              setUnpicked(false)
            }}
          />
          <datalist id={listId}>
            {offered.map((customer) => <option key={customer.id} value={customerLabel(customer)} />)}
          </datalist>
          {fieldError?.param === "customer_id"
            ? <p className="field-error" id={`${listId}-note`} role="alert">{fieldError.message}</p>
            : (
              <p className="field-hint" id={`${listId}-note`} aria-live="polite">
                {picked === undefined ? "Type at least two letters, then pick from the list." : <>For <CustomerName id={picked} /></>}
              </p>
            )}
        </div>
        <div><PermittedButton permission="marketing.manage" type="submit" busy={issue.isPending}>Issue card</PermittedButton></div>
      </form>
      {issue.data === undefined ? null : (
        <div className="alert alert-success" role="status">
          Card issued. Send the customer their card: <a className="mono break" href={issue.data.card_url} target="_blank" rel="noreferrer">{issue.data.card_url}</a>
        </div>
      )}
    </section>
  )
}
