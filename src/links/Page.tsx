/**
 * The hosted page of a payment link: what is being paid for, the amount (or a field for it), and a
 * button that starts a payment and moves on to its hosted checkout. The pay URL reaches the script through
 * an attribute, never inside the script.
 */
import type { LinkStatus, PublicPaymentLink } from "../../domain/Links.ts"
import { HostedPage, useCopy } from "../platform/pages/Document.tsx"
import type { Copy } from "../platform/pages/Locale.ts"

const LINK_STYLES = `
  .hint { font-size: .85rem; color: #556; margin: 0; }
`

/** Starts the payment with fetch and follows the checkout address it answers with. */
const PAY_SCRIPT = `
const form = document.getElementById("pay-form");
if (form) {
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
      // The API's messages are for developers, in English: the payer reads what went wrong in the page's language.
      const param = answer && answer.error ? answer.error.param : undefined;
      errorEl.textContent = param === "amount" ? data.errors.amount
        : param === "payer_email" ? data.errors.email
        : response.status === 409 ? data.errors.unavailable
        : response.status === 429 ? data.errors.busy
        : data.errors.start;
    } catch (error) {
      errorEl.textContent = data.errors.network;
    }
    button.disabled = false;
  });
}
`

const boundsHint = (copy: Copy, link: PublicPaymentLink) => {
  const money = (amount: string) => copy.money(amount, link.currency)
  if (link.min_amount !== null && link.max_amount !== null) {
    return copy.text("link.bounds.between", { min: money(link.min_amount), max: money(link.max_amount) })
  }
  if (link.min_amount !== null) return copy.text("link.bounds.min", { min: money(link.min_amount) })
  if (link.max_amount !== null) return copy.text("link.bounds.max", { max: money(link.max_amount) })
  return copy.text("link.bounds.any", { currency: link.currency })
}

const PayForm = ({ link }: { readonly link: PublicPaymentLink }) => {
  const copy = useCopy()
  return (
    <form id="pay-form" data-pay-url={`/links/${link.id}/pay`} noValidate>
      {link.amount === null
        ? (
          <>
            <label>
              {copy.text("link.amount_label", { currency: link.currency })}
              <input
                id="amount"
                name="amount"
                inputMode="decimal"
                autoComplete="off"
                required
                placeholder={link.currency === "KHR" ? "5000" : "12.50"}
              />
            </label>
            <p className="hint">{boundsHint(copy, link)}</p>
          </>
        )
        : null}
      <label>
        {copy.text("link.email_label")}
        <input id="payer-email" name="payer_email" type="email" autoComplete="email" />
      </label>
      <button type="submit" id="pay-button">
        {link.amount === null
          ? copy.text("link.continue")
          : copy.text("link.pay", { amount: copy.money(link.amount, link.currency) })}
      </button>
      <p className="error" id="error" role="alert"></p>
    </form>
  )
}

const LinkView = ({ link }: { readonly link: PublicPaymentLink }) => {
  const copy = useCopy()
  const closed: Exclude<LinkStatus, "open"> | undefined = link.status === "open" ? undefined : link.status
  return (
    <HostedPage
      title={copy.text("link.title", { title: link.title, store: link.merchant.name })}
      branding={link.merchant}
      styles={LINK_STYLES}
      // A closed link's state colours its status line the way the checkout does (paid green, expired red).
      state={closed}
      script={closed === undefined
        ? {
          data: {
            errors: {
              start: copy.text("link.error.start"),
              network: copy.text("link.error.network"),
              amount: copy.text("link.error.amount", { bounds: boundsHint(copy, link) }),
              email: copy.text("link.error.email"),
              unavailable: copy.text("link.error.unavailable"),
              busy: copy.text("link.error.busy")
            }
          },
          source: PAY_SCRIPT
        }
        : undefined}
    >
      {link.livemode ? null : <span className="badge">{copy.text("page.test_mode")}</span>}
      <p className="title" id="title">{link.title}</p>
      {link.description === null ? null : <p className="description" id="description">{link.description}</p>}
      {link.amount === null ? null : <p className="amount" id="amount-fixed">{copy.money(link.amount, link.currency)}</p>}
      {link.due_date === null ? null : <p className="detail" id="due">{copy.text("link.due", { date: copy.calendarDate(link.due_date) })}</p>}
      {closed === undefined
        ? <PayForm link={link} />
        : (
          <>
            <p className="status" id="status">{copy.text(`link.${closed}.title`)}</p>
            <p className="detail">{copy.text(`link.${closed}.detail`)}</p>
          </>
        )}
    </HostedPage>
  )
}

export const linkPage = (link: PublicPaymentLink) => <LinkView link={link} />
