/**
 * Every mail the service sends, as a subject, a plain-text part and an HTML part, in one place so they
 * share one look: a white card on the product's light blue, the store's colour on customer mail.
 *
 * The HTML is built only with the `html` tag below, which escapes every interpolated value unless it is
 * itself a fragment made by the tag: a customer's name, a store's description or an organization's name
 * can never become markup. Pure functions: no I/O, no clock (times come in).
 */
import { MONEY_LOCALE, moneyFormatOptions } from "../platform/pages/Locale.ts"

export interface RenderedMail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

// -------------------------------------------------------------------------------------------------
// Escaping
// -------------------------------------------------------------------------------------------------

/** A piece of HTML that is already safe: made by `html`, never from a caller's string. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString() {
    return this.value
  }
}

export const escapeHtml = (value: string): string =>
  value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;")

const renderValue = (value: unknown): string =>
  value instanceof SafeHtml
    ? value.value
    : Array.isArray(value)
    ? value.map(renderValue).join("")
    : value === null || value === undefined || value === false
    ? ""
    : escapeHtml(String(value))

/** HTML with every interpolation escaped (fragments made by `html` itself pass through). */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): SafeHtml =>
  new SafeHtml(strings.reduce((out, part, index) => out + part + (index < values.length ? renderValue(values[index]) : ""), ""))

const COLOR = /^#[0-9a-f]{6}$/i
/** Only a plain `#rrggbb` reaches a style attribute; anything else is the product's blue. */
export const safeColor = (value: string | null | undefined): string =>
  value !== null && value !== undefined && COLOR.test(value) ? value : PRODUCT_BLUE

const PRODUCT_BLUE = "#0b5cad"
const PRODUCT_NAME = "KHQR Platform"

// -------------------------------------------------------------------------------------------------
// Layout
// -------------------------------------------------------------------------------------------------

interface Layout {
  readonly lang: "en" | "km"
  readonly title: string
  /** The sender the reader recognizes: the product, or the store on customer mail. */
  readonly brand: string
  readonly color: string
  readonly paragraphs: ReadonlyArray<string>
  readonly rows?: ReadonlyArray<readonly [string, string]>
  readonly action?: { readonly label: string; readonly url: string }
  readonly footer: string
  /** Lines for the plain-text part only (a token to paste where a link cannot be opened). */
  readonly textOnly?: ReadonlyArray<string>
}

const htmlOf = (layout: Layout): string =>
  html`<!doctype html>
<html lang="${layout.lang}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${layout.title}</title></head>
<body style="margin:0;padding:24px 12px;background:#e8f0fb;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d2330">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:520px;background:#ffffff;border-radius:16px;padding:28px 24px">
<tr><td style="font-size:15px;font-weight:600;color:${layout.color};padding-bottom:8px">${layout.brand}</td></tr>
<tr><td><h1 style="font-size:20px;margin:0 0 12px">${layout.title}</h1></td></tr>
${layout.paragraphs.map((paragraph) => html`<tr><td style="font-size:15px;line-height:1.5;padding-bottom:12px">${paragraph}</td></tr>`)}
${
    layout.rows === undefined ? "" : html`<tr><td><table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="margin:4px 0 16px">${
      layout.rows.map(([label, value]) =>
        html`<tr><td style="padding:6px 0;border-bottom:1px solid #eeeeee;color:#556">${label}</td><td style="padding:6px 0;border-bottom:1px solid #eeeeee;text-align:right">${value}</td></tr>`
      )
    }</table></td></tr>`
  }
${
    layout.action === undefined ? "" : html`<tr><td style="padding:8px 0 16px"><a href="${layout.action.url}" style="display:inline-block;background:${layout.color};color:#ffffff;text-decoration:none;font-weight:600;padding:12px 20px;border-radius:10px">${layout.action.label}</a></td></tr>
<tr><td style="font-size:13px;color:#556;padding-bottom:12px;word-break:break-all">${layout.action.url}</td></tr>`
  }
<tr><td style="font-size:12px;color:#667;border-top:1px solid #eeeeee;padding-top:12px">${layout.footer}</td></tr>
</table>
</td></tr></table>
</body>
</html>
`.value

const textOf = (layout: Layout): string => {
  const lines = [layout.title, "", ...layout.paragraphs.flatMap((paragraph) => [paragraph, ""])]
  if (layout.rows !== undefined) {
    for (const [label, value] of layout.rows) lines.push(`${label}: ${value}`)
    lines.push("")
  }
  if (layout.action !== undefined) lines.push(`${layout.action.label}:`, layout.action.url, "")
  if (layout.textOnly !== undefined) lines.push(...layout.textOnly, "")
  lines.push("--", layout.footer, "")
  return lines.join("\n")
}

const compose = (subject: string, layout: Layout): RenderedMail => ({ subject, text: textOf(layout), html: htmlOf(layout) })

const accountLayout = (parts: Omit<Layout, "lang" | "brand" | "color" | "footer"> & { readonly footer?: string }): Layout => ({
  lang: "en",
  brand: PRODUCT_NAME,
  color: PRODUCT_BLUE,
  footer: parts.footer ?? `You receive this mail because of your ${PRODUCT_NAME} account. We never ask for your password by e-mail.`,
  ...parts
})

const utc = (at: Date) => `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`

// -------------------------------------------------------------------------------------------------
// Account mail
// -------------------------------------------------------------------------------------------------

export const emailVerification = (input: { readonly link: string }): RenderedMail =>
  compose(
    "Verify your e-mail address",
    accountLayout({
      title: "Verify your e-mail address",
      paragraphs: [
        "Please confirm that this address is yours by opening this link within 24 hours.",
        "If you did not create an account, ignore this mail: nothing happens without the link."
      ],
      action: { label: "Verify my address", url: input.link }
    })
  )

export const passwordReset = (input: { readonly link: string; readonly token: string }): RenderedMail =>
  compose(
    "Reset your password",
    accountLayout({
      title: "Reset your password",
      paragraphs: [
        "Someone asked to reset the password of this account. If it was you, use this link within one hour.",
        "If it was not you, ignore this mail: your password stays as it is."
      ],
      action: { label: "Choose a new password", url: input.link },
      textOnly: [`Reset token: ${input.token}`]
    })
  )

export const registrationAttempt = (input: { readonly signInUrl: string; readonly at: Date }): RenderedMail =>
  compose(
    "Someone tried to register with your e-mail address",
    accountLayout({
      title: "You already have an account",
      paragraphs: [
        `Someone tried to create a new account with this e-mail address on ${utc(input.at)}. An account with it exists already, so no second account was made.`,
        "If it was you, sign in instead, or ask for a password reset from the sign-in page if you forgot your password. If it was not you, nothing changed and there is nothing to do."
      ],
      action: { label: "Sign in", url: input.signInUrl }
    })
  )

export const mfaChanged = (input: { readonly enabled: boolean; readonly at: Date }): RenderedMail => {
  const title = input.enabled ? "Two-factor authentication is on" : "Two-factor authentication is off"
  return compose(
    title,
    accountLayout({
      title,
      paragraphs: [
        input.enabled
          ? `Two-factor authentication was turned on for your account on ${utc(input.at)}. Signing in now also needs a code from your authenticator app.`
          : `Two-factor authentication was turned off for your account on ${utc(input.at)}. Signing in now needs only your password.`,
        "If you did not do this, change your password at once and turn two-factor authentication back on."
      ]
    })
  )
}

export const apiKeyCreated = (input: {
  readonly storeName: string
  readonly mode: "test" | "live"
  readonly last4: string
  readonly keyName: string | null
  readonly at: Date
  readonly consoleUrl: string
}): RenderedMail =>
  compose(
    `A new ${input.mode} API key for ${input.storeName}`,
    accountLayout({
      title: "A new API key was created",
      paragraphs: [
        `A ${input.mode} API key was created for the store ${input.storeName}. Anyone holding it can act for the store${input.mode === "live" ? " with real money" : " in test mode"}.`,
        "If you do not know about this key, revoke it in the console now."
      ],
      rows: [
        ["Store", input.storeName],
        ["Mode", input.mode],
        ["Name", input.keyName ?? "—"],
        ["Ends in", `…${input.last4}`],
        ["Created", utc(input.at)]
      ],
      action: { label: "Open the console", url: input.consoleUrl }
    })
  )

export const invitation = (input: {
  readonly organizationName: string
  readonly role: string
  readonly invitedBy: string | null
  readonly link: string
  readonly expiresAt: Date
}): RenderedMail =>
  compose(
    `You are invited to join ${input.organizationName}`,
    accountLayout({
      title: `Join ${input.organizationName}`,
      paragraphs: [
        `${input.invitedBy ?? "An administrator"} invited you to the organization ${input.organizationName} as ${input.role}.`,
        `Open this link to accept: create your account there, or sign in if you have one with this e-mail address. The link works once and until ${utc(input.expiresAt)}.`,
        "If you did not expect this invitation, ignore this mail: nothing happens without the link."
      ],
      action: { label: "Accept the invitation", url: input.link }
    })
  )

export const memberAdded = (input: {
  readonly organizationName: string
  readonly role: string
  readonly invitedBy: string | null
  readonly link: string
}): RenderedMail =>
  compose(
    `You were added to ${input.organizationName}`,
    accountLayout({
      title: `You were added to ${input.organizationName}`,
      paragraphs: [
        `${input.invitedBy ?? "An administrator"} added you to the organization ${input.organizationName} as ${input.role}.`,
        "Sign in with this e-mail address to see its stores."
      ],
      action: { label: "Sign in", url: input.link }
    })
  )

export const emailChangeVerification = (input: { readonly link: string; readonly newEmail: string }): RenderedMail =>
  compose(
    "Confirm your new e-mail address",
    accountLayout({
      title: "Confirm your new e-mail address",
      paragraphs: [
        `You asked to sign in with ${input.newEmail} from now on. Open this link within 24 hours to confirm that this address is yours; your address changes only then.`,
        "If you did not ask for this, ignore this mail: nothing changes without the link."
      ],
      action: { label: "Confirm my new address", url: input.link }
    })
  )

export const emailChangeRequested = (input: { readonly newEmail: string; readonly at: Date }): RenderedMail =>
  compose(
    "A change of your e-mail address was requested",
    accountLayout({
      title: "A change of your e-mail address was requested",
      paragraphs: [
        `On ${utc(input.at)} someone signed in to your account asked to change its e-mail address to ${input.newEmail}. The change happens only once the link mailed to the new address is opened.`,
        "If this was not you, change your password at once: someone else may know it."
      ]
    })
  )

// -------------------------------------------------------------------------------------------------
// Customer mail: receipts and refund notices, in English or Khmer
// -------------------------------------------------------------------------------------------------

export type CustomerLanguage = "en" | "km"

/** A customer's language from what is known of them (`metadata.language` or `metadata.locale`); English otherwise. */
export const customerLanguage = (metadata: unknown): CustomerLanguage => {
  if (typeof metadata !== "object" || metadata === null) return "en"
  const record = metadata as Record<string, unknown>
  const stated = record["language"] ?? record["locale"] ?? record["lang"]
  return typeof stated === "string" && /^km\b|^kh\b|^km[-_]/i.test(stated.trim()) ? "km" : "en"
}

/** `12.50` USD as `$12.50`, `40000` KHR as `៛40,000`: as the customer pages write money (platform/pages/Locale.ts). */
export const formatMoney = (amount: string, currency: string): string =>
  new Intl.NumberFormat(MONEY_LOCALE, moneyFormatOptions(currency)).format(amount as Intl.StringNumericLiteral)

const CUSTOMER_TEXT = {
  en: {
    receiptSubject: (store: string) => `Your receipt from ${store}`,
    receiptTitle: "Thank you for your payment",
    receiptLead: (store: string, amount: string) => `${store} received your payment of ${amount}.`,
    refundSubject: (store: string) => `Your refund from ${store}`,
    refundTitle: "Your refund is on its way",
    refundLead: (store: string, amount: string) => `${store} refunded ${amount} of your payment.`,
    amount: "Amount",
    refunded: "Refunded",
    paid: "Paid",
    reference: "Reference",
    description: "Description",
    date: "Date",
    view: "View the receipt",
    test: "Test mode: no money moved.",
    footer: (store: string) => `You receive this mail because you asked ${store} for e-mail receipts.`
  },
  km: {
    receiptSubject: (store: string) => `បង្កាន់ដៃពី ${store}`,
    receiptTitle: "សូមអរគុណសម្រាប់ការទូទាត់របស់អ្នក",
    receiptLead: (store: string, amount: string) => `${store} បានទទួលការទូទាត់របស់អ្នកចំនួន ${amount}។`,
    refundSubject: (store: string) => `ការសងប្រាក់វិញពី ${store}`,
    refundTitle: "ប្រាក់របស់អ្នកកំពុងត្រូវបានសងវិញ",
    refundLead: (store: string, amount: string) => `${store} បានសងប្រាក់ ${amount} ពីការទូទាត់របស់អ្នកវិញ។`,
    amount: "ចំនួនទឹកប្រាក់",
    refunded: "ចំនួនដែលបានសងវិញ",
    paid: "បានបង់",
    reference: "លេខយោង",
    description: "ការពិពណ៌នា",
    date: "កាលបរិច្ឆេទ",
    view: "មើលបង្កាន់ដៃ",
    test: "របៀបសាកល្បង៖ គ្មានប្រាក់ត្រូវបានផ្ទេរទេ។",
    footer: (store: string) => `អ្នកទទួលបានអ៊ីមែលនេះ ដោយសារអ្នកបានស្នើសុំបង្កាន់ដៃតាមអ៊ីមែលពី ${store}។`
  }
} as const

export interface ReceiptFacts {
  readonly language: CustomerLanguage
  readonly storeName: string
  readonly storeColor: string | null
  readonly amount: string
  readonly currency: string
  readonly referenceId: string | null
  readonly description: string | null
  readonly at: Date
  readonly receiptUrl: string
  readonly livemode: boolean
}

const customerLayout = (facts: ReceiptFacts, title: string, lead: string, rows: ReadonlyArray<readonly [string, string]>): Layout => {
  const words = CUSTOMER_TEXT[facts.language]
  return {
    lang: facts.language,
    brand: facts.storeName,
    color: safeColor(facts.storeColor),
    title,
    paragraphs: facts.livemode ? [lead] : [lead, words.test],
    rows: [
      ...rows,
      ...(facts.referenceId === null ? [] : [[words.reference, facts.referenceId] as const]),
      ...(facts.description === null ? [] : [[words.description, facts.description] as const]),
      [words.date, utc(facts.at)]
    ],
    action: { label: words.view, url: facts.receiptUrl },
    footer: words.footer(facts.storeName)
  }
}

export const receipt = (facts: ReceiptFacts): RenderedMail => {
  const words = CUSTOMER_TEXT[facts.language]
  const amount = formatMoney(facts.amount, facts.currency)
  const testPrefix = facts.livemode ? "" : "[Test] "
  return compose(
    testPrefix + words.receiptSubject(facts.storeName),
    customerLayout(facts, words.receiptTitle, words.receiptLead(facts.storeName, amount), [[words.amount, amount]])
  )
}

export const refundNotice = (facts: ReceiptFacts & { readonly refundAmount: string }): RenderedMail => {
  const words = CUSTOMER_TEXT[facts.language]
  const refunded = formatMoney(facts.refundAmount, facts.currency)
  const testPrefix = facts.livemode ? "" : "[Test] "
  return compose(
    testPrefix + words.refundSubject(facts.storeName),
    customerLayout(facts, words.refundTitle, words.refundLead(facts.storeName, refunded), [
      [words.refunded, refunded],
      [words.paid, formatMoney(facts.amount, facts.currency)]
    ])
  )
}
