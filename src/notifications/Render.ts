/**
 * The text of a notification for an event's object (the object as its webhook carries it: amounts are
 * decimal strings with their currency, API.md "Payments").
 */
const text = (value: unknown, fallback = "") => (typeof value === "string" || typeof value === "number" ? String(value) : fallback)

const money = (amount: unknown, currency: unknown) => `${text(amount, "?")} ${text(currency)}`.trim()

export const renderMessage = (type: string, object: unknown): string => {
  const o = (typeof object === "object" && object !== null ? object : {}) as Record<string, unknown>
  const reference = typeof o.reference_id === "string" ? `, order ${o.reference_id}` : ""
  switch (type) {
    case "payment.completed":
      return `Payment received: ${money(o.amount, o.currency)} (${text(o.id)}${reference})`
    case "payment.refunded":
      return `Payment refunded: ${money(o.amount_refunded, o.currency)} of ${money(o.amount, o.currency)} (${text(o.id)}${reference})`
    case "loyalty.redemption.created":
      return `Reward redeemed: ${text(o.points, "?")} points by customer ${text(o.customer_id, "?")} (${text(o.id)})`
    case "risk.case_opened": {
      const subject = (typeof o.subject === "object" && o.subject !== null ? o.subject : {}) as Record<string, unknown>
      return `Risk case opened: ${text(o.kind, "unknown kind")} on ${text(subject.type, "?")} ${text(subject.id)} (${text(o.id)})`
    }
    default:
      return "Test message from your store: notifications reach this chat."
  }
}
