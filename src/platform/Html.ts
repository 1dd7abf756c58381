/**
 * The shell of every hosted page a customer's browser sees (checkout, receipt, wallet, games, links, referral
 * landing, password reset): the store's branding, escaping of everything merchant-supplied, and a
 * Content-Security-Policy that allows only the page's own inline script, by a per-response nonce.
 */
import { HttpServerResponse } from "@effect/platform"
import { randomBytes } from "node:crypto"
import type { CheckoutMerchant } from "../../domain/Checkout.ts"

export const escapeHtml = (value: string): string =>
  value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;")

/** JSON that is safe inside a <script> element: no `</script>`, no HTML comment openers. */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")

const COLOR = /^#[0-9a-f]{6}$/i
const safeColor = (value: string | null, fallback: string) => (value !== null && COLOR.test(value) ? value : fallback)
const safeLogo = (value: string | null) => (value !== null && /^https:\/\//.test(value) ? value : null)

/** Whether a request's Accept header prefers an HTML page to JSON (a browser navigating). */
export const prefersHtml = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  const quality = (type: string) => {
    let best = -1
    for (const part of accept.split(",")) {
      const [media = "", ...params] = part.trim().split(";")
      const q = Number(params.find((p) => p.trim().startsWith("q="))?.trim().slice(2) ?? "1")
      if (media.trim() === type) best = Math.max(best, Number.isNaN(q) ? 1 : q)
    }
    return best
  }
  const html = quality("text/html")
  return html > 0 && html >= quality("application/json")
}

export const page = (options: {
  readonly title: string
  readonly merchant: CheckoutMerchant
  readonly body: string
  readonly script?: string
  /** The payment status the page starts in; its styles hide the QR code once the payment is over. */
  readonly state?: string
  /** Who may frame the page: nobody, unless a page of the service's own shows it (the console's preview). */
  readonly frameAncestors?: "'self'"
}) => {
  const nonce = randomBytes(16).toString("base64")
  const primary = safeColor(options.merchant.primary_color, "#0b5cad")
  const accent = safeColor(options.merchant.accent_color, "#e8f0fb")
  const logo = safeLogo(options.merchant.logo_url)
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(options.title)}</title>
<style>
  :root { --primary: ${primary}; --accent: ${accent}; }
  * { box-sizing: border-box; }
  body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--accent);
         color: #1d2330; min-height: 100vh; display: flex; align-items: center; justify-content: center; padding: 16px; }
  main { background: #fff; border-radius: 16px; box-shadow: 0 8px 30px rgba(0,0,0,.08); width: 100%; max-width: 420px;
         padding: 28px 24px; text-align: center; }
  header { display: flex; align-items: center; justify-content: center; gap: 12px; margin-bottom: 12px; }
  header img { width: 44px; height: 44px; object-fit: contain; border-radius: 8px; }
  header h1 { font-size: 1.1rem; margin: 0; }
  .amount { font-size: 2.2rem; font-weight: 700; color: var(--primary); margin: 8px 0 4px; }
  .description { color: #556; margin: 0 0 16px; overflow-wrap: anywhere; }
  .qr { width: 100%; max-width: 280px; aspect-ratio: 1; margin: 8px auto; display: block; }
  .status { font-size: 1.25rem; font-weight: 600; margin: 16px 0 4px; }
  .detail { color: #556; margin: 0 0 8px; }
  .countdown { color: #556; font-variant-numeric: tabular-nums; }
  .badge { display: inline-block; font-size: .75rem; background: #fff3cd; color: #7a5b00; border-radius: 999px; padding: 2px 10px; }
  [data-state="paid"] .status, [data-state="partially_refunded"] .status, [data-state="refunded"] .status { color: #1a7f37; }
  [data-state="expired"] .status, [data-state="failed"] .status, [data-state="cancelled"] .status { color: #b42318; }
  [data-state]:not([data-state="pending"]):not([data-state="scanned"]) .qr,
  [data-state]:not([data-state="pending"]):not([data-state="scanned"]) .countdown { display: none; }
  table { width: 100%; border-collapse: collapse; margin-top: 12px; text-align: left; }
  td { padding: 6px 0; border-bottom: 1px solid #eee; } td:last-child { text-align: right; }
</style>
</head>
<body>
<main${options.state === undefined ? "" : ` data-state="${escapeHtml(options.state)}"`}>
  <header>${logo === null ? "" : `<img src="${escapeHtml(logo)}" alt="">`}<h1>${escapeHtml(options.merchant.name)}</h1></header>
  ${options.body}
</main>
${options.script === undefined ? "" : `<script nonce="${nonce}">${options.script}</script>`}
</body>
</html>`
  return HttpServerResponse.html(html).pipe(
    HttpServerResponse.setHeaders({
      "content-security-policy":
        `default-src 'none'; img-src data: https:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; ` +
        `connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${options.frameAncestors ?? "'none'"}`,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff"
    })
  )
}
