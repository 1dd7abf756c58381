/**
 * The checkout (branding, amount, QR code, a countdown, live status over SSE) and the receipt a customer
 * keeps (store, amount, date, reference, description, status, refunds; printable), in the hosted page layout.
 */
import type { CheckoutView, Receipt } from "../../domain/Checkout.ts"
import type { PaymentStatus } from "../../domain/Payments.ts"
import { HostedPage, useCopy } from "../platform/pages/Document.tsx"
import { type Copy, MONEY_LOCALE, moneyFormatOptions } from "../platform/pages/Locale.ts"

const STATUSES: ReadonlyArray<PaymentStatus> = [
  "pending",
  "scanned",
  "paid",
  "partially_refunded",
  "refunded",
  "expired",
  "failed",
  "cancelled"
]

const statusText = (copy: Copy, status: PaymentStatus) => ({
  title: copy.text(`status.${status}.title`),
  detail: copy.text(`status.${status}.detail`)
})

const hasRefunds = (amountRefunded: string) => Number(amountRefunded) > 0

/** The checkout's script: countdown, live status over SSE, and the page's states, in the page's language. */
const CHECKOUT_SCRIPT = `
const main = document.querySelector("main");
const statusEl = document.getElementById("status");
const detailEl = document.getElementById("detail");
const countdownEl = document.getElementById("countdown");
const amountRefundedEl = document.getElementById("amount-refunded");
const money = (amount, currency) => new Intl.NumberFormat(data.moneyLocale, data.money[currency]).format(amount);
const show = (status) => {
  main.dataset.state = status;
  const text = data.text[status] || { title: status, detail: "" };
  statusEl.textContent = text.title;
  detailEl.textContent = text.detail;
};
const open = () => main.dataset.state === "pending" || main.dataset.state === "scanned";
const tick = () => {
  if (!open()) return;
  const left = Math.max(0, Math.round((Date.parse(data.expiresAt) - Date.now()) / 1000));
  countdownEl.textContent = data.expiresIn.replace("{time}", Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0"));
  if (left > 0) setTimeout(tick, 1000);
};
show(data.status);
tick();
if (open() && "EventSource" in window) {
  const source = new EventSource(data.events);
  source.addEventListener("payment.status", (event) => {
    const frame = JSON.parse(event.data);
    show(frame.status);
    if (frame.amount_refunded && Number(frame.amount_refunded) > 0) {
      amountRefundedEl.textContent = data.refunded.replace("{amount}", money(frame.amount_refunded, frame.currency));
    }
    if (!open()) source.close();
  });
}
`

const Checkout = ({ preview = false, view }: { readonly view: CheckoutView; readonly preview?: boolean }) => {
  const copy = useCopy()
  const status = statusText(copy, view.status)
  const data = {
    events: `/checkout/${view.id}/events`,
    expiresAt: view.expires_at,
    status: view.status,
    language: copy.language,
    moneyLocale: MONEY_LOCALE,
    money: { [view.currency]: moneyFormatOptions(view.currency) },
    // The script fills the placeholders it is handed back: the time left, an amount refunded later.
    expiresIn: copy.text("checkout.expires_in", { time: "{time}" }),
    refunded: copy.text("checkout.refunded", { amount: "{amount}" }),
    text: Object.fromEntries(STATUSES.map((s) => [s, statusText(copy, s)]))
  }
  return (
    <HostedPage
      title={copy.text("checkout.title", { store: view.merchant.name })}
      branding={view.merchant}
      state={view.status}
      script={preview ? undefined : { data, source: CHECKOUT_SCRIPT }}
    >
      {view.livemode ? null : <span className="badge">{copy.text("page.test_mode")}</span>}
      <p className="amount" id="amount">{copy.money(view.amount, view.currency)}</p>
      {view.description === null ? null : <p className="description" id="description">{view.description}</p>}
      <img className="qr" id="qr" src={view.qr.png_data_url} alt={copy.text("checkout.qr_alt")} />
      <p className="status" id="status" role="status" aria-live="polite">{status.title}</p>
      <p className="detail" id="detail">{status.detail}</p>
      <p className="countdown" id="countdown"></p>
      <p className="detail" id="amount-refunded">
        {hasRefunds(view.amount_refunded)
          ? copy.text("checkout.refunded", { amount: copy.money(view.amount_refunded, view.currency) })
          : null}
      </p>
    </HostedPage>
  )
}

export const checkoutPage = (view: CheckoutView) => <Checkout view={view} />

/**
 * The checkout page as a payer would see it, for the console's branding preview: the same page without its
 * script (no countdown, no live status). Rendered with `frameAncestors: "'self'"`, so the console may frame it.
 */
export const checkoutPreviewPage = (view: CheckoutView) => <Checkout view={view} preview />

const RECEIPT_STYLES = `
  .receipt-heading { font-size: 1rem; font-weight: 600; letter-spacing: .04em; text-transform: uppercase; color: #556; margin: 4px 0 0; }
  .receipt-status { display: inline-block; font-weight: 600; border-radius: 999px; padding: 2px 12px; background: #e7f6ec; color: #1a7f37; }
  .receipt-status.partially_refunded { background: #fff3cd; color: #7a5b00; }
  .receipt-status.refunded { background: #fdecea; color: #b42318; }
  .keep { color: #556; font-size: .85rem; margin: 16px 0 0; }
  .refund th, .refund td { color: #b42318; }
  .net th, .net td { font-weight: 600; color: #1d2330; }
  .print { margin-top: 16px; font: inherit; font-weight: 600; padding: 10px 20px; border-radius: 8px; border: 1px solid var(--primary);
           color: var(--primary); background: #fff; cursor: pointer; }
  @media print { .amount { color: #000; } }
`

const PRINT_SCRIPT = `
document.getElementById("print").addEventListener("click", () => window.print());
`

/** Whole minor units of an amount string, to subtract refunds without floating point. */
const minorUnits = (amount: string, decimals: number) => {
  const [whole = "0", fraction = ""] = amount.split(".")
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt((fraction + "0".repeat(decimals)).slice(0, decimals) || "0")
}
const fromMinorUnits = (units: bigint, decimals: number) => {
  if (decimals === 0) return units.toString()
  const text = units.toString().padStart(decimals + 1, "0")
  return `${text.slice(0, -decimals)}.${text.slice(-decimals)}`
}

const ReceiptView = ({ receipt }: { readonly receipt: Receipt }) => {
  const copy = useCopy()
  const decimals = receipt.currency === "KHR" ? 0 : 2
  const refunded = hasRefunds(receipt.amount_refunded)
  const net = fromMinorUnits(minorUnits(receipt.amount, decimals) - minorUnits(receipt.amount_refunded, decimals), decimals)
  return (
    <HostedPage
      title={copy.text("receipt.title", { store: receipt.merchant.name })}
      branding={receipt.merchant}
      styles={RECEIPT_STYLES}
      script={{ data: null, source: PRINT_SCRIPT }}
    >
      {receipt.livemode ? null : <span className="badge">{copy.text("page.test_mode")}</span>}
      <h2 className="receipt-heading">{copy.text("receipt.heading")}</h2>
      <p className="amount" id="amount">{copy.money(receipt.amount, receipt.currency)}</p>
      <p>
        <span className={`receipt-status ${receipt.status}`} id="receipt-status">
          {receipt.status === "partially_refunded" ? copy.text("receipt.partly_refunded") : copy.text(`status.${receipt.status}.title`)}
        </span>
      </p>
      <table>
        <tbody>
          <tr>
            <th scope="row">{copy.text("receipt.date")}</th>
            <td id="paid-at">{copy.dateTime(receipt.paid_at)}</td>
          </tr>
          {receipt.description === null ? null : (
            <tr>
              <th scope="row">{copy.text("receipt.description")}</th>
              <td id="description">{receipt.description}</td>
            </tr>
          )}
          {receipt.reference_id === null ? null : (
            <tr>
              <th scope="row">{copy.text("receipt.reference")}</th>
              <td id="reference">{receipt.reference_id}</td>
            </tr>
          )}
          <tr>
            <th scope="row">{copy.text("receipt.number")}</th>
            <td id="receipt-number">{receipt.payment_id}</td>
          </tr>
          <tr>
            <th scope="row">{copy.text("receipt.amount")}</th>
            <td>{copy.money(receipt.amount, receipt.currency)}</td>
          </tr>
          {receipt.refunds.map((refund) => (
            <tr className="refund" key={refund.id}>
              <th scope="row">{copy.text("receipt.refund_on", { date: copy.dateTime(refund.created_at) })}</th>
              <td>−{copy.money(refund.amount, receipt.currency)}</td>
            </tr>
          ))}
          {refunded
            ? (
              <tr className="net">
                <th scope="row">{copy.text("receipt.net")}</th>
                <td id="net">{copy.money(net, receipt.currency)}</td>
              </tr>
            )
            : null}
        </tbody>
      </table>
      <p className="keep">{copy.text("receipt.keep")}</p>
      <button className="print no-print" id="print" type="button">{copy.text("receipt.print")}</button>
    </HostedPage>
  )
}

export const receiptPage = (receipt: Receipt) => <ReceiptView receipt={receipt} />
