/**
 * The hosted game pages:
 *
 * - `GET /play/game/{gameId}?c={customerId}&t=…`: a spin or lucky-draw game with a wheel of its prizes; with a
 *   customer's id and token that go together (the game's `player`), a play button and a link to the wallet. The
 *   page's one script posts the play (`connect-src 'self'`) and spins the wheel onto the prize the server
 *   drew. Without a player the page says to open the store's link.
 * - `GET /play/{playId}?t=…`: a play's result, or an issued scratch card with a scratch area that reveals it
 *   (the reveal carries the card's token).
 *
 * Merchant text (store, game and prize names) is escaped by the renderer and written with `textContent` by
 * the scripts.
 */
import type { HostedGame, HostedPlay, Play } from "../../domain/Games.ts"
import { HostedPage, useCopy } from "../platform/pages/Document.tsx"
import type { Copy } from "../platform/pages/Locale.ts"

const GAME_STYLES = `
  h2 { font-size: 1.3rem; margin: 4px 0 12px; overflow-wrap: anywhere; }
  .caption { color: #556; margin: 0 0 12px; font-size: .9rem; }
  .wheel-box { position: relative; width: 260px; max-width: 100%; aspect-ratio: 1; margin: 8px auto 16px; }
  .pointer { position: absolute; left: 50%; top: -6px; transform: translateX(-50%); width: 0; height: 0;
             border-left: 12px solid transparent; border-right: 12px solid transparent; border-top: 22px solid #1d2330; z-index: 2; }
  #wheel { width: 100%; height: 100%; border-radius: 50%; border: 6px solid var(--primary); transition: transform 3.2s cubic-bezier(.17,.67,.21,1); }
  button { background: var(--primary); color: #fff; border: 0; border-radius: 999px; padding: 12px 28px; font-size: 1rem;
           font-weight: 600; cursor: pointer; font-family: inherit; }
  button[disabled] { opacity: .5; cursor: default; }
  ul { list-style: none; padding: 0; margin: 16px 0 0; text-align: left; }
  li { display: flex; gap: 10px; align-items: center; padding: 6px 0; border-bottom: 1px solid #eef0f4; overflow-wrap: anywhere; }
  li.gone { color: #6b6f80; text-decoration: line-through; }
  .swatch { width: 14px; height: 14px; border-radius: 4px; flex: none; }
  .result { font-size: 1.2rem; font-weight: 600; margin: 16px 0 4px; min-height: 1.5em; overflow-wrap: anywhere; }
  .result.won { color: #1a7f37; }
  .voucher { font-family: ui-monospace, monospace; font-size: 1.3rem; letter-spacing: .08em; background: var(--accent);
             border-radius: 8px; padding: 8px 12px; display: inline-block; margin-top: 6px; }
  [hidden] { display: none !important; }
  .card { position: relative; min-height: 160px; border-radius: 14px; background: var(--accent); margin: 12px 0; overflow: hidden;
          display: flex; align-items: center; justify-content: center; flex-direction: column; padding: 8px; }
  .cover { position: absolute; inset: 0; background: repeating-linear-gradient(45deg, #b8bcc6, #b8bcc6 10px, #c9ccd4 10px, #c9ccd4 20px);
           display: flex; align-items: center; justify-content: center; font-weight: 700; color: #1d2330; cursor: pointer;
           transition: opacity .8s ease; border: 0; border-radius: 0; width: 100%; font-size: 1.1rem; }
  .cover.scratched { opacity: 0; pointer-events: none; }
  /* A shopper who asked their device for less motion gets the outcome at once: no five turns, no fade. */
  @media (prefers-reduced-motion: reduce) { #wheel, .cover { transition: none; } }
  .proof { color: #5f6372; font-size: .72rem; margin-top: 18px; overflow-wrap: anywhere; }
  a { color: var(--primary); font-weight: 600; }
  .back { margin-top: 14px; }
`

const PALETTE = ["#f59e0b", "#10b981", "#3b82f6", "#ef4444", "#8b5cf6", "#14b8a6", "#f97316", "#64748b"]

/** The path and query of a URL the service made: the scripts call their own origin (`connect-src 'self'`). */
const pathOf = (url: string) => {
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

const brandingOf = (store: HostedGame["store"]) => ({
  name: store.branding.display_name ?? store.name,
  logo_url: store.branding.logo_url,
  primary_color: store.branding.primary_color,
  accent_color: store.branding.accent_color
})

/** What a result says, for the server-rendered page (the script says the same for a fresh play). */
const resultText = (copy: Copy, play: Pick<Play, "status" | "prize">): { text: string; won: boolean } => {
  if (play.status === "issued") return { text: "", won: false }
  const prize = play.prize
  if (prize === null || prize.kind === "nothing") return { text: copy.text("game.no_prize"), won: false }
  if (prize.kind === "points") return { text: copy.text("game.won_points", { prize: prize.name, points: prize.points ?? 0 }), won: true }
  return { text: copy.text("game.won", { prize: prize.name }), won: true }
}

/** The texts the scripts show a fresh result with: the same catalog texts as `resultText`. */
const resultTexts = (copy: Copy) => ({
  language: copy.language,
  noPrize: copy.text("game.no_prize"),
  won: copy.text("game.won", { prize: "{prize}" }),
  wonPoints: copy.pluralTemplates("game.won_points", "points", { prize: "{prize}" }),
  error: copy.text("game.error")
})

const RESULT_SCRIPT = `
const describe = (play) => {
  const prize = play.prize;
  if (!prize || prize.kind === "nothing") return { text: data.result.noPrize, won: false };
  if (prize.kind === "points") {
    const points = prize.points || 0;
    const templates = data.result.wonPoints;
    const template = templates[new Intl.PluralRules(data.result.language).select(points)] || templates.other;
    return { text: template.replace("{prize}", () => prize.name).replace("{points}", new Intl.NumberFormat(data.result.language).format(points)), won: true };
  }
  return { text: data.result.won.replace("{prize}", () => prize.name), won: true };
};
const showResult = (play) => {
  const shown = describe(play);
  const result = document.getElementById("result");
  result.textContent = shown.text;
  result.className = shown.won ? "result won" : "result";
  const voucher = document.getElementById("voucher");
  if (play.voucher_code) { voucher.textContent = play.voucher_code; voucher.hidden = false; }
};
const failure = async (response) => {
  try { const body = await response.json(); return (body && body.error && body.error.message) || data.result.error; }
  catch (e) { return data.result.error; }
};
`

const PLAY_SCRIPT = `${RESULT_SCRIPT}
const button = document.getElementById("play");
const status = document.getElementById("status");
let turned = 0;
button.addEventListener("click", async () => {
  button.disabled = true;
  document.getElementById("result").textContent = "";
  status.textContent = data.busy;
  const response = await fetch(data.play, { method: "POST", headers: { accept: "application/json" } });
  if (!response.ok) { status.textContent = await failure(response); button.disabled = false; return; }
  const play = await response.json();
  const slice = data.slices.find((s) => play.prize && s.id === play.prize.id);
  // The pointer is at the top: turn the wheel so the middle of the drawn slice ends under it.
  const middle = slice ? (slice.from + slice.to) / 2 : 0;
  turned += 360 * 5 + ((360 - middle - (turned % 360)) % 360 + 360) % 360;
  const wheel = document.getElementById("wheel");
  wheel.style.transform = "rotate(" + turned + "deg)";
  const done = () => { status.textContent = ""; showResult(play); document.body.dataset.played = play.id; button.disabled = false; };
  // Without a transition (the shopper asked for reduced motion) no transitionend comes: the result shows at once.
  if (parseFloat(getComputedStyle(wheel).transitionDuration) > 0) wheel.addEventListener("transitionend", done, { once: true });
  else done();
});
`

const GameView = ({ game }: { readonly game: HostedGame }) => {
  const copy = useCopy()
  const total = game.prizes.reduce((sum, prize) => sum + prize.weight, 0)
  let start = 0
  const slices = game.prizes.map((prize, index) => {
    const from = total === 0 ? 0 : (start / total) * 360
    start += prize.weight
    const to = total === 0 ? 0 : (start / total) * 360
    return { id: prize.id, from, to, color: PALETTE[index % PALETTE.length]! }
  })
  const gradient = slices.length === 0
    ? "#e6e8ee"
    : `conic-gradient(${slices.map((slice) => `${slice.color} ${slice.from.toFixed(3)}deg ${slice.to.toFixed(3)}deg`).join(", ")})`
  const instant = game.type !== "scratch"
  const player = instant && game.playable ? game.player : null
  const status = !game.playable
    ? copy.text("game.status.closed")
    : !instant
    ? copy.text("game.status.scratch")
    : player === null
    ? copy.text("game.status.no_player")
    : copy.text("game.status.ready")
  const branding = brandingOf(game.store)
  return (
    <HostedPage
      title={copy.text("game.title", { game: game.name, store: branding.name })}
      branding={branding}
      styles={GAME_STYLES}
      script={player === null ? undefined : {
        data: {
          play: pathOf(player.play_url),
          busy: copy.text(game.type === "spin" ? "game.spinning" : "game.drawing"),
          slices: slices.map(({ from, id, to }) => ({ id, from, to })),
          result: resultTexts(copy)
        },
        source: PLAY_SCRIPT
      }}
    >
      <h2 id="game-name">{game.name}</h2>
      {instant
        ? (
          <div className="wheel-box">
            <div className="pointer"></div>
            <div id="wheel" style={{ background: gradient }}></div>
          </div>
        )
        : null}
      <p className="caption" id="status">{status}</p>
      {player === null ? null : <button id="play" type="button">{copy.text(game.type === "spin" ? "game.type.spin" : "game.type.lucky_draw")}</button>}
      <p className="result" id="result" aria-live="polite"></p>
      <span className="voucher" id="voucher" hidden></span>
      <ul aria-label={copy.text("game.prizes")}>
        {game.prizes.map((prize, index) => (
          <li className={prize.available ? "prize" : "prize gone"} key={prize.id}>
            <span className="swatch" style={{ background: PALETTE[index % PALETTE.length] }}></span>
            <span>{prize.name}</span>
          </li>
        ))}
      </ul>
      {player === null ? null : (
        <p className="caption back">
          <a id="wallet-link" href={pathOf(player.wallet_url)}>{copy.text("game.wallet_link")}</a>
        </p>
      )}
      <p className="proof">
        {copy.text("game.seed_commitment", { value: game.seed_commitment })}
        {game.seed === null ? null : (
          <>
            <br />
            {copy.text("game.seed", { value: game.seed })}
          </>
        )}
      </p>
    </HostedPage>
  )
}

export const gamePage = (game: HostedGame) => <GameView game={game} />

/** Where the card's reveal posts: the card's own page address plus `/reveal`, with its token. */
const revealPathOf = (cardUrl: string) => {
  const parsed = new URL(cardUrl)
  return `${parsed.pathname}/reveal${parsed.search}`
}

const REVEAL_SCRIPT = `${RESULT_SCRIPT}
const cover = document.getElementById("cover");
cover.addEventListener("click", async () => {
  cover.disabled = true;
  cover.textContent = data.busy;
  const response = await fetch(data.reveal, { method: "POST", headers: { accept: "application/json" } });
  if (!response.ok) { cover.textContent = await failure(response); cover.disabled = false; return; }
  const revealed = await response.json();
  showResult(revealed);
  cover.classList.add("scratched");
  document.body.dataset.revealed = revealed.id;
});
`

const PlayView = ({ play }: { readonly play: HostedPlay }) => {
  const copy = useCopy()
  const result = resultText(copy, play)
  const issued = play.status === "issued"
  const branding = brandingOf(play.game.store)
  return (
    <HostedPage
      title={copy.text("game.title", { game: play.game.name, store: branding.name })}
      branding={branding}
      styles={GAME_STYLES}
      script={issued
        ? { data: { reveal: revealPathOf(play.card_url), busy: copy.text("game.scratching"), result: resultTexts(copy) }, source: REVEAL_SCRIPT }
        : undefined}
    >
      <h2 id="game-name">{play.game.name}</h2>
      <div className="card">
        <p className={result.won ? "result won" : "result"} id="result" aria-live="polite">{result.text}</p>
        <span className="voucher" id="voucher" hidden={play.voucher_code === undefined}>{play.voucher_code ?? ""}</span>
        {issued ? <button className="cover" id="cover" type="button">{copy.text("game.scratch")}</button> : null}
      </div>
      <p className="proof">{copy.text("game.play_proof", { id: play.id, value: play.proof.seed_commitment })}</p>
    </HostedPage>
  )
}

export const playPage = (play: HostedPlay) => <PlayView play={play} />
