/** The text of a notification for an event's object. */
const money = (amount: unknown, currency: unknown) => {
  const minor = typeof amount === "number" ? amount : Number(amount)
  const code = typeof currency === "string" ? currency : ""
  return code === "USD" ? `${(minor / 100).toFixed(2)} USD` : `${minor} ${code}`.trim()
}

export const renderMessage = (type: string, object: unknown): string => {
  const o = (typeof object === "object" && object !== null ? object : {}) as Record<string, unknown>
  switch (type) {
    case "payment.completed":
      return `Payment received: ${money(o.amount, o.currency)} (${String(o.id ?? "")})`
    case "payment.refunded":
      return `Payment refunded: ${money(o.amount_refunded ?? o.amount, o.currency)} of ${String(o.id ?? "")}`
    case "loyalty.redemption.created":
      return `Reward redeemed: ${String(o.id ?? "")} for ${String(o.points ?? "?")} points`
    case "risk.case_opened":
      return `Risk case opened: ${String(o.reason ?? o.kind ?? "")} (${String(o.id ?? "")})`
    default:
      return `Test message from your store (${type})`
  }
}
