/**
 * The hosted game pages, in the checkout's layout (same escaping, same nonce Content-Security-Policy):
 *
 * - `GET /play/game/{gameId}?c={customerId}&t=…`: a spin or lucky-draw game with a wheel of its prizes; with a
 *   customer's id and token that go together (the game's `player`), a play button and a link to the wallet. The
 *   page's one script posts the play (`connect-src 'self'`) and spins the wheel onto the prize the server
 *   drew. Without a player the page says to open the store's link.
 * - `GET /play/{playId}?t=…`: a play's result, or an issued scratch card with a scratch area that reveals it
 *   (the reveal carries the card's token).
 *
 * Merchant text (store, game and prize names) is escaped into the HTML and written with `textContent` by
 * the script; the data the script reads is JSON escaped for a <script> element.
 */
import type { HostedGame, HostedPlay, Play } from "../../domain/Games.ts"
import { escapeHtml, page } from "../platform/Html.ts"

/** JSON that is safe inside a <script> element: no `</script>`, no HTML comment openers. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")

const GAME_STYLES = `<style>
  h2 { font-size: 1.3rem; margin: 4px 0 12px; }
  .caption { color: #556; margin: 0 0 12px; font-size: .9rem; }
  .wheel-box { position: relative; width: 260px; height: 260px; margin: 8px auto 16px; }
  .pointer { position: absolute; left: 50%; top: -6px; transform: translateX(-50%); width: 0; height: 0;
             border-left: 12px solid transparent; border-right: 12px solid transparent; border-top: 22px solid #1d2330; z-index: 2; }
  #wheel { width: 100%; height: 100%; border-radius: 50%; border: 6px solid var(--primary); transition: transform 3.2s cubic-bezier(.17,.67,.21,1); }
  button { background: var(--primary); color: #fff; border: 0; border-radius: 999px; padding: 12px 28px; font-size: 1rem;
           font-weight: 600; cursor: pointer; }
  button[disabled] { opacity: .5; cursor: default; }
  ul { list-style: none; padding: 0; margin: 16px 0 0; text-align: left; }
  li { display: flex; gap: 10px; align-items: center; padding: 6px 0; border-bottom: 1px solid #eef0f4; }
  li.gone { color: #6b6f80; text-decoration: line-through; }
  .swatch { width: 14px; height: 14px; border-radius: 4px; flex: none; }
  .result { font-size: 1.2rem; font-weight: 600; margin: 16px 0 4px; min-height: 1.5em; }
  .result.won { color: #1a7f37; }
  .voucher { font-family: ui-monospace, monospace; font-size: 1.3rem; letter-spacing: .08em; background: var(--accent);
             border-radius: 8px; padding: 8px 12px; display: inline-block; margin-top: 6px; }
  [hidden] { display: none !important; }
  .card { position: relative; height: 160px; border-radius: 14px; background: var(--accent); margin: 12px 0; overflow: hidden;
          display: flex; align-items: center; justify-content: center; flex-direction: column; }
  .cover { position: absolute; inset: 0; background: repeating-linear-gradient(45deg, #b8bcc6, #b8bcc6 10px, #c9ccd4 10px, #c9ccd4 20px);
           display: flex; align-items: center; justify-content: center; font-weight: 700; color: #39404f; cursor: pointer;
           transition: opacity .8s ease; border: 0; border-radius: 0; width: 100%; font-size: 1.1rem; }
  .cover.scratched { opacity: 0; pointer-events: none; }
  .proof { color: #5f6372; font-size: .72rem; margin-top: 18px; overflow-wrap: anywhere; }
  a { color: var(--primary); font-weight: 600; }
  .back { margin-top: 14px; }
</style>`

const PALETTE = ["#f59e0b", "#10b981", "#3b82f6", "#ef4444", "#8b5cf6", "#14b8a6", "#f97316", "#64748b"]

/** The path and query of a URL the service made: the scripts call their own origin (`connect-src 'self'`). */
const pathOf = (url: string) => {
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

const merchantOf = (store: HostedGame["store"]) => ({
  name: store.branding.display_name ?? store.name,
  logo_url: store.branding.logo_url,
  primary_color: store.branding.primary_color,
  accent_color: store.branding.accent_color
})

/** What a result says, for the server-rendered page (the script says the same for a fresh play). */
const resultText = (play: Pick<Play, "status" | "prize">): { text: string; won: boolean } => {
  if (play.status === "issued") return { text: "", won: false }
  const prize = play.prize
  if (prize === null || prize.kind === "nothing") return { text: "No prize this time", won: false }
  if (prize.kind === "points") return { text: `You won ${prize.name}: +${prize.points ?? 0} points`, won: true }
  return { text: `You won ${prize.name}`, won: true }
}

/** The script's text for a fresh result; the same wording as `resultText`. */
const RESULT_SCRIPT = `
  const describe = (play) => {
    const prize = play.prize;
    if (!prize || prize.kind === "nothing") return { text: "No prize this time", won: false };
    if (prize.kind === "points") return { text: "You won " + prize.name + ": +" + (prize.points || 0) + " points", won: true };
    return { text: "You won " + prize.name, won: true };
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
    try { const body = await response.json(); return (body && body.error && body.error.message) || "Something went wrong"; }
    catch (e) { return "Something went wrong"; }
  };
`

export const gamePage = (game: HostedGame) => {
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
    ? "This game is not open for play right now."
    : !instant
    ? "Scratch cards of this game are handed out by the store."
    : player === null
    ? "Open the link the store sent you to play."
    : "Tap the button to play."
  const script = player !== null
    ? `
(() => {
  const data = ${scriptJson({ play: pathOf(player.play_url), spin: game.type === "spin", slices: slices.map(({ from, id, to }) => ({ id, from, to })) })};
  ${RESULT_SCRIPT}
  const button = document.getElementById("play");
  const status = document.getElementById("status");
  let turned = 0;
  button.addEventListener("click", async () => {
    button.disabled = true;
    document.getElementById("result").textContent = "";
    status.textContent = data.spin ? "Spinning…" : "Drawing…";
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
    wheel.addEventListener("transitionend", done, { once: true });
  });
})();
`
    : undefined
  return page({
    title: `${game.name} · ${game.store.branding.display_name ?? game.store.name}`,
    merchant: merchantOf(game.store),
    body: `${GAME_STYLES}
  <h2 id="game-name">${escapeHtml(game.name)}</h2>
  ${
      instant
        ? `<div class="wheel-box"><div class="pointer"></div><div id="wheel" style="background: ${gradient}"></div></div>`
        : ""
    }
  <p class="caption" id="status">${escapeHtml(status)}</p>
  ${player === null ? "" : `<button id="play" type="button">${game.type === "spin" ? "Spin" : "Draw"}</button>`}
  <p class="result" id="result" aria-live="polite"></p>
  <span class="voucher" id="voucher" hidden></span>
  <ul>${
      game.prizes.map((prize, index) =>
        `<li class="prize${prize.available ? "" : " gone"}"><span class="swatch" style="background: ${
          PALETTE[index % PALETTE.length]
        }"></span><span>${escapeHtml(prize.name)}</span></li>`
      ).join("")
    }</ul>
  ${player === null ? "" : `<p class="caption back"><a id="wallet-link" href="${escapeHtml(pathOf(player.wallet_url))}">Your points</a></p>`}
  <p class="proof">Seed commitment ${escapeHtml(game.seed_commitment)}${
      game.seed === null ? "" : `<br>Seed ${escapeHtml(game.seed)}`
    }</p>`,
    ...(script === undefined ? {} : { script })
  })
}

/** The card's reveal, with its token: `/play/{playId}/reveal?t=…` from its `card_url`. */
const revealPathOf = (cardUrl: string) => {
  const parsed = new URL(cardUrl)
  return `${parsed.pathname}/reveal${parsed.search}`
}

export const playPage = (play: HostedPlay) => {
  const result = resultText(play)
  const issued = play.status === "issued"
  const script = issued
    ? `
(() => {
  const data = ${scriptJson({ reveal: revealPathOf(play.card_url) })};
  ${RESULT_SCRIPT}
  const cover = document.getElementById("cover");
  cover.addEventListener("click", async () => {
    cover.disabled = true;
    cover.textContent = "Scratching…";
    const response = await fetch(data.reveal, { method: "POST", headers: { accept: "application/json" } });
    if (!response.ok) { cover.textContent = await failure(response); cover.disabled = false; return; }
    const revealed = await response.json();
    showResult(revealed);
    cover.classList.add("scratched");
    document.body.dataset.revealed = revealed.id;
  });
})();
`
    : undefined
  return page({
    title: `${play.game.name} · ${play.game.store.branding.display_name ?? play.game.store.name}`,
    merchant: merchantOf(play.game.store),
    body: `${GAME_STYLES}
  <h2 id="game-name">${escapeHtml(play.game.name)}</h2>
  <div class="card">
    <p class="result${result.won ? " won" : ""}" id="result" aria-live="polite">${escapeHtml(result.text)}</p>
    <span class="voucher" id="voucher"${play.voucher_code === undefined ? " hidden" : ""}>${escapeHtml(play.voucher_code ?? "")}</span>
    ${issued ? `<button class="cover" id="cover" type="button">Scratch to reveal</button>` : ""}
  </div>
  <p class="proof">Play ${escapeHtml(play.id)} · seed commitment ${escapeHtml(play.proof.seed_commitment)}</p>`,
    ...(script === undefined ? {} : { script })
  })
}
