/**
 * The checkout (branding, amount, QR code, a countdown, live status over SSE) and the receipt, in the
 * hosted page shell.
 */
import type { CheckoutView, Receipt } from "../../domain/Checkout.ts"
import { escapeHtml, page, scriptJson } from "../platform/Html.ts"

const STATUS_TEXT: Record<string, { title: string; detail: string }> = {
  pending: { title: "Scan to pay", detail: "Open your banking app and scan the KHQR code." },
  scanned: { title: "Confirm in your app", detail: "The code was scanned; confirm the payment in your banking app." },
  paid: { title: "Paid", detail: "Thank you! Your payment was received." },
  partially_refunded: { title: "Paid", detail: "This payment was received and has been partly refunded." },
  refunded: { title: "Refunded", detail: "This payment was received and has been refunded." },
  expired: { title: "Expired", detail: "This payment request has expired. Ask the merchant for a new one." },
  failed: { title: "Payment failed", detail: "The payment did not go through. Ask the merchant to try again." },
  cancelled: { title: "Cancelled", detail: "The merchant cancelled this payment request." }
}

/** The script of the checkout page: countdown, live status over SSE, and the page's states. */
const checkoutScript = (view: CheckoutView) => `
(() => {
  const data = ${scriptJson({ events: `/checkout/${view.id}/events`, expiresAt: view.expires_at, status: view.status, text: STATUS_TEXT })};
  const main = document.querySelector("main");
  const statusEl = document.getElementById("status");
  const detailEl = document.getElementById("detail");
  const countdownEl = document.getElementById("countdown");
  const amountRefundedEl = document.getElementById("amount-refunded");
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
    countdownEl.textContent = "Expires in " + Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
    if (left > 0) setTimeout(tick, 1000);
  };
  show(data.status);
  tick();
  if (open() && "EventSource" in window) {
    const source = new EventSource(data.events);
    source.addEventListener("payment.status", (event) => {
      const frame = JSON.parse(event.data);
      show(frame.status);
      if (frame.amount_refunded && frame.amount_refunded !== "0" && frame.amount_refunded !== "0.00") {
        amountRefundedEl.textContent = "Refunded " + frame.amount_refunded + " " + frame.currency;
      }
      if (!open()) source.close();
    });
  }
})();
`

const checkoutBody = (view: CheckoutView) => `
  ${view.livemode ? "" : `<span class="badge">Test mode</span>`}
  <p class="amount" id="amount">${escapeHtml(view.amount)} ${escapeHtml(view.currency)}</p>
  ${view.description === null ? "" : `<p class="description" id="description">${escapeHtml(view.description)}</p>`}
  <img class="qr" id="qr" src="${escapeHtml(view.qr.png_data_url)}" alt="KHQR code to scan with a banking app">
  <p class="status" id="status" role="status" aria-live="polite">${escapeHtml(STATUS_TEXT[view.status]?.title ?? view.status)}</p>
  <p class="detail" id="detail">${escapeHtml(STATUS_TEXT[view.status]?.detail ?? "")}</p>
  <p class="countdown" id="countdown"></p>
  <p class="detail" id="amount-refunded"></p>`

export const checkoutPage = (view: CheckoutView) =>
  page({
    title: `Pay ${view.merchant.name}`,
    merchant: view.merchant,
    state: view.status,
    body: checkoutBody(view),
    script: checkoutScript(view)
  })

/**
 * The checkout page as a payer would see it, for the console's branding preview: the same page without its
 * script (no countdown, no live status), which the console's own pages may frame.
 */
export const checkoutPreviewPage = (view: CheckoutView) =>
  page({
    title: `Pay ${view.merchant.name}`,
    merchant: view.merchant,
    state: view.status,
    body: checkoutBody(view),
    frameAncestors: "'self'"
  })

export const receiptPage = (receipt: Receipt) =>
  page({
    title: `Receipt from ${receipt.merchant.name}`,
    merchant: receipt.merchant,
    body: `
  <p class="status">Receipt</p>
  <p class="amount">${escapeHtml(receipt.amount)} ${escapeHtml(receipt.currency)}</p>
  ${receipt.description === null ? "" : `<p class="description">${escapeHtml(receipt.description)}</p>`}
  <table>
    <tr><td>Paid</td><td>${escapeHtml(new Date(receipt.paid_at).toUTCString())}</td></tr>
    ${receipt.reference_id === null ? "" : `<tr><td>Reference</td><td>${escapeHtml(receipt.reference_id)}</td></tr>`}
    <tr><td>Payment</td><td>${escapeHtml(receipt.payment_id)}</td></tr>
    ${
      receipt.refunds.map((refund) =>
        `<tr><td>Refund ${escapeHtml(new Date(refund.created_at).toUTCString())}</td><td>−${escapeHtml(refund.amount)} ${
          escapeHtml(receipt.currency)
        }</td></tr>`
      ).join("")
    }
  </table>`
  })
