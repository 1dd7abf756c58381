/**
 * Games: the store's games, and a new game with its prizes (kind, points, weight, inventory) whose odds are
 * shown as percentages while it is written. A game is created paused, to be checked and then activated on
 * its own page.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { Game, GameType, PrizeKind } from "../../../../../domain/Games.ts"
import { Link, navigate } from "../../router.tsx"
import { useConsoleMutation, useConsoleQuery } from "../../rpc.ts"
import { PermissionNote, PermittedButton } from "../../ui/Permitted.tsx"
import { Button, Dialog, Empty, Field, FormError, formatTime, Loading } from "../../ui.tsx"
import { SelectField } from "../../ui/Fields.tsx"
import { ErrorNotice, formatPercent } from "../../ui/Forms.tsx"
import { Pager, useCursorTrail } from "../../ui/Paging.tsx"
import { useWorkspace } from "../../workspace.tsx"

export const GAME_TYPES: ReadonlyArray<{ readonly value: GameType; readonly label: string }> = [
  { value: "spin", label: "Spin the wheel" },
  { value: "lucky_draw", label: "Lucky draw" },
  { value: "scratch", label: "Scratch card" }
]
export const gameTypeLabel = (type: GameType) => GAME_TYPES.find((option) => option.value === type)?.label ?? type

const PRIZE_KINDS: ReadonlyArray<{ readonly value: PrizeKind; readonly label: string }> = [
  { value: "points", label: "Points" },
  { value: "voucher", label: "Voucher" },
  { value: "nothing", label: "Nothing (try again)" }
]

/** Where a game stands now: what the merchant reads first on its row and its page. */
export const gameState = (game: Game, now = Date.now()) => {
  if (game.deleted_at !== null) return { label: "Deleted", badge: "expired" }
  if (game.ends_at !== null && Date.parse(game.ends_at) <= now) return { label: "Ended", badge: "expired" }
  if (!game.active) return { label: "Paused", badge: "pending" }
  if (game.starts_at !== null && Date.parse(game.starts_at) > now) return { label: "Scheduled", badge: "scanned" }
  return { label: "Active", badge: "paid" }
}

export const GameStateBadge = ({ game }: { readonly game: Game }) => {
  const state = gameState(game)
  return <span className={`badge badge-${state.badge}`}>{state.label}</span>
}

/**
 * Each prize's chance of a draw now: its weight over the total weight of the prizes that can still be won
 * (active, with inventory left), as the draw itself counts them.
 */
export const oddsOf = (prizes: ReadonlyArray<{ readonly weight: number; readonly left: number | null; readonly active: boolean }>) => {
  const eligible = (prize: (typeof prizes)[number]) => prize.active && prize.weight >= 1 && (prize.left === null || prize.left > 0)
  const total = prizes.reduce((sum, prize) => sum + (eligible(prize) ? prize.weight : 0), 0)
  return prizes.map((prize) => (eligible(prize) && total > 0 ? prize.weight / total : 0))
}

export const GamesPage = () => {
  const { store } = useWorkspace()
  const storeId = store!.id
  const trail = useCursorTrail([storeId])
  const games = useConsoleQuery(["games", storeId, trail.cursor], (client) => client.ListGames({ store_id: storeId, cursor: trail.cursor }))
  const [creating, setCreating] = useState(false)
  return (
    <div className="page">
      <div className="page-header">
        <div>
          <h1>Games</h1>
          <p className="muted">Spin-the-wheel, lucky draws and scratch cards for your customers. Every draw is provably fair.</p>
        </div>
        <PermittedButton permission="marketing.manage" kind="primary" onClick={() => setCreating(true)}>New game</PermittedButton>
      </div>
      <PermissionNote permission="marketing.manage" />
      <ErrorNotice error={games.error} />
      <section className="card table-card">
        {games.isPending ? <Loading /> : (games.data?.data.length ?? 0) === 0
          ? <Empty title="No games yet"><p>Create a game, check its odds, then activate it.</p></Empty>
          : (
            <table className="table">
              <caption className="visually-hidden">Games, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="hide-narrow">Prizes</th>
                  <th scope="col" className="hide-narrow">Created</th>
                </tr>
              </thead>
              <tbody>
                {games.data!.data.map((game) => (
                  <tr key={game.id}>
                    <td><Link to={`/games/${game.id}`}>{game.name}</Link></td>
                    <td>{gameTypeLabel(game.type)}</td>
                    <td><GameStateBadge game={game} /></td>
                    <td className="hide-narrow">{game.prizes.filter((prize) => prize.active).length}</td>
                    <td className="hide-narrow nowrap">{formatTime(game.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        <Pager trail={trail} page={games.data} label="Games pages" />
      </section>
      <CreateGameDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  )
}

interface PrizeDraft {
  readonly name: string
  readonly kind: PrizeKind
  readonly points: string
  readonly weight: string
  readonly inventory: string
}

const FIRST_PRIZES: ReadonlyArray<PrizeDraft> = [
  { name: "100 bonus points", kind: "points", points: "100", weight: "10", inventory: "" },
  { name: "Free coffee", kind: "voucher", points: "", weight: "5", inventory: "20" },
  { name: "Try again", kind: "nothing", points: "", weight: "85", inventory: "" }
]

/** A whole number typed in a form, or the text itself so the server names what is wrong with it. */
const wholeNumber = (text: string): number => (text.trim() === "" ? Number.NaN : Number(text.trim()))

const CreateGameDialog = ({ onClose, open }: { readonly open: boolean; readonly onClose: () => void }) => {
  const { store } = useWorkspace()
  const queryClient = useQueryClient()
  const [name, setName] = useState("")
  const [type, setType] = useState<GameType>("spin")
  const [maxPlays, setMaxPlays] = useState("3")
  const [prizes, setPrizes] = useState<ReadonlyArray<PrizeDraft>>(FIRST_PRIZES)
  const create = useConsoleMutation((client, _: void) =>
    client.CreateGame({
      store_id: store!.id,
      name: name.trim(),
      type,
      active: false,
      max_plays_per_customer: maxPlays.trim() === "" ? null : wholeNumber(maxPlays),
      prizes: prizes.map((prize) => ({
        name: prize.name.trim(),
        kind: prize.kind,
        ...(prize.kind === "points" ? { points: wholeNumber(prize.points) } : {}),
        weight: wholeNumber(prize.weight),
        inventory: prize.inventory.trim() === "" ? null : wholeNumber(prize.inventory)
      }))
    }), {
    onSuccess: (game) => {
      void queryClient.invalidateQueries({ queryKey: ["games", store!.id] })
      onClose()
      navigate(`/games/${game.id}`)
    }
  })
  useEffect(() => {
    if (!open) return
    setName("")
    setType("spin")
    setMaxPlays("3")
    setPrizes(FIRST_PRIZES)
    create.reset()
  }, [open])
  const odds = oddsOf(prizes.map((prize) => ({
    weight: Number.isInteger(Number(prize.weight)) ? Number(prize.weight) : 0,
    left: prize.inventory.trim() === "" ? null : Number(prize.inventory),
    active: true
  })))
  const setPrize = (index: number, change: Partial<PrizeDraft>) =>
    setPrizes(prizes.map((prize, i) => (i === index ? { ...prize, ...change } : prize)))
  const fields = ["name", "type", "max_plays_per_customer", ...prizes.flatMap((_, i) => ["name", "kind", "points", "weight", "inventory"].map((f) => `prizes.${i}.${f}`))]
  return (
    <Dialog title="New game" open={open} onClose={onClose}>
      <form onSubmit={(event) => {
        event.preventDefault()
        create.mutate()
      }} noValidate>
        <div className="dialog-body">
          <FormError error={create.error} fields={fields} />
          <Field label="Name" name="name" value={name} onChange={setName} error={create.error} placeholder="Lunar New Year wheel" required autoFocus />
          <div className="field-row game-row">
            <SelectField label="Type" name="type" value={type} options={GAME_TYPES} onChange={setType} error={create.error} />
            <Field
              label="Plays per customer"
              name="max_plays_per_customer"
              value={maxPlays}
              onChange={setMaxPlays}
              inputMode="numeric"
              error={create.error}
              hint="Empty: unlimited"
            />
          </div>
          <fieldset className="events prizes-editor">
            <legend>Prizes, in draw order</legend>
            {prizes.map((prize, index) => (
              <div key={index} className="prize-draft" role="group" aria-label={`Prize ${index + 1}`}>
                <Field label="Prize name" name={`prizes.${index}.name`} value={prize.name} onChange={(value) => setPrize(index, { name: value })} error={create.error} />
                <div className="field-row prize-numbers">
                  <SelectField
                    label="Kind"
                    name={`prizes.${index}.kind`}
                    value={prize.kind}
                    options={PRIZE_KINDS}
                    onChange={(kind) => setPrize(index, { kind })}
                    error={create.error}
                  />
                  {prize.kind === "points"
                    ? <Field label="Points" name={`prizes.${index}.points`} value={prize.points} onChange={(value) => setPrize(index, { points: value })} inputMode="numeric" error={create.error} />
                    : null}
                  <Field label="Weight" name={`prizes.${index}.weight`} value={prize.weight} onChange={(value) => setPrize(index, { weight: value })} inputMode="numeric" error={create.error} />
                  <Field
                    label="Inventory"
                    name={`prizes.${index}.inventory`}
                    value={prize.inventory}
                    onChange={(value) => setPrize(index, { inventory: value })}
                    inputMode="numeric"
                    placeholder="Unlimited"
                    error={create.error}
                  />
                </div>
                <div className="prize-draft-footer">
                  <span className="muted small" data-odds={index}>Odds: <strong>{formatPercent(odds[index] ?? 0)}</strong></span>
                  <Button kind="ghost" onClick={() => setPrizes(prizes.filter((_, i) => i !== index))} disabled={prizes.length <= 1}>
                    Remove<span className="visually-hidden"> prize {index + 1}</span>
                  </Button>
                </div>
              </div>
            ))}
            <div>
              <Button onClick={() => setPrizes([...prizes, { name: "", kind: "points", points: "50", weight: "1", inventory: "" }])}>Add prize</Button>
            </div>
          </fieldset>
          <p className="muted small">The game is created paused: check its odds, then activate it on its page.</p>
        </div>
        <footer className="dialog-footer">
          <Button onClick={onClose}>Cancel</Button>
          <Button kind="primary" type="submit" busy={create.isPending}>Create game</Button>
        </footer>
      </form>
    </Dialog>
  )
}
