/**
 * The hosted page of a payment link: what is being paid for, the amount (or a field for it), and a
 * button that starts a payment and moves on to its hosted checkout. It uses the checkout's layout, so
 * the same escaping and nonce Content-Security-Policy apply; the pay URL reaches the script through an
 * escaped attribute, never inside the script.
 */
import type { LinkStatus, PublicPaymentLink } from "../../domain/Links.ts"
import { escapeHtml, page } from "../platform/Html.ts"

const STATUS_TEXT: Record<Exclude<LinkStatus, "open">, { title: string; detail: string }> = {
  inactive: { title: "Not available", detail: "This payment link is not active. Ask the merchant for a new one." },
  expired: { title: "Expired", detail: "This payment link has expired. Ask the merchant for a new one." },
  paid: { title: "Paid", detail: "This invoice has been paid. Thank you!" }
}

// The layout's styles cover the checkout; these add the form. `style-src 'unsafe-inline'` allows them.
const FORM_STYLES = `<style>
  .title { font-size: 1.2rem; font-weight: 600; margin: 8px 0 4px; overflow-wrap: anywhere; }
  form { display: grid; gap: 10px; margin-top: 16px; text-align: left; }
  label { font-size: .9rem; color: #556; display: grid; gap: 4px; }
  input { font: inherit; padding: 10px 12px; border: 1px solid #ccd; border-radius: 8px; }
  button { font: inherit; font-weight: 600; padding: 12px; border: 0; border-radius: 8px; background: var(--primary);
           color: #fff; cursor: pointer; }
  button[disabled] { opacity: .6; cursor: wait; }
  .error { color: #b42318; min-height: 1.2em; margin: 0; }
  .hint { font-size: .85rem; color: #556; margin: 0; }
</style>`

const boundsHint = (link: PublicPaymentLink) => {
  const currency = escapeHtml(link.currency)
  if (link.min_amount !== null && link.max_amount !== null) {
    return `From ${escapeHtml(link.min_amount)} to ${escapeHtml(link.max_amount)} ${currency}`
  }
  if (link.min_amount !== null) return `At least ${escapeHtml(link.min_amount)} ${currency}`
  if (link.max_amount !== null) return `At most ${escapeHtml(link.max_amount)} ${currency}`
  return `Amount in ${currency}`
}

const payForm = (link: PublicPaymentLink) => `
  <form id="pay-form" data-pay-url="${escapeHtml(`/links/${link.id}/pay`)}" novalidate>
    ${
  link.amount === null
    ? `<label>Amount (${escapeHtml(link.currency)})
      <input id="amount" name="amount" inputmode="decimal" autocomplete="off" required placeholder="${
      link.currency === "KHR" ? "5000" : "12.50"
    }">
    </label>
    <p class="hint">${boundsHint(link)}</p>`
    : ""
}
    <label>E-mail for the merchant (optional)
      <input id="payer-email" name="payer_email" type="email" autocomplete="email">
    </label>
    <button type="submit" id="pay-button">${
  link.amount === null ? "Continue to pay" : `Pay ${escapeHtml(link.amount)} ${escapeHtml(link.currency)}`
}</button>
    <p class="error" id="error" role="alert"></p>
  </form>`

/** Starts the payment with fetch and follows the checkout address it answers with. */
const PAY_SCRIPT = `
(() => {
  const form = document.getElementById("pay-form");
  if (!form) return;
  const button = document.getElementById("pay-button");
  const errorEl = document.getElementById("error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorEl.textContent = "";
    const body = {};
    const amount = document.getElementById("amount");
    if (amount && amount.value.trim() !== "") body.amount = amount.value.trim();
    const email = document.getElementById("payer-email");
    if (email && email.value.trim() !== "") body.payer_email = email.value.trim();
    button.disabled = true;
    try {
      const response = await fetch(form.dataset.payUrl, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body)
      });
      const answer = await response.json().catch(() => null);
      if (response.status === 201 && answer && /^https?:\\/\\//.test(answer.checkout_url)) {
        window.location.assign(answer.checkout_url);
        return;
      }
      errorEl.textContent = (answer && answer.error && answer.error.message) || "The payment could not be started. Please try again.";
    } catch (error) {
      errorEl.textContent = "The payment could not be started. Check your connection and try again.";
    }
    button.disabled = false;
  });
})();
`

export const linkPage = (link: PublicPaymentLink) => {
  const closed = link.status === "open" ? undefined : STATUS_TEXT[link.status]
  return page({
    title: `${link.title} · ${link.merchant.name}`,
    merchant: link.merchant,
    body: `${FORM_STYLES}
  ${link.livemode ? "" : `<span class="badge">Test mode</span>`}
  <p class="title" id="title">${escapeHtml(link.title)}</p>
  ${link.description === null ? "" : `<p class="description" id="description">${escapeHtml(link.description)}</p>`}
  ${link.amount === null ? "" : `<p class="amount" id="amount-fixed">${escapeHtml(link.amount)} ${escapeHtml(link.currency)}</p>`}
  ${link.due_date === null ? "" : `<p class="detail">Due ${escapeHtml(link.due_date)}</p>`}
  ${
      closed === undefined
        ? payForm(link)
        : `<p class="status" id="status">${escapeHtml(closed.title)}</p><p class="detail">${escapeHtml(closed.detail)}</p>`
    }`,
    // A closed link's state colours its status line the way the checkout does (paid green, expired red).
    ...(closed === undefined ? { script: PAY_SCRIPT } : { state: link.status })
  })
}
