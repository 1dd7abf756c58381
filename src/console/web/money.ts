/** Decimal amounts as the API writes them ("12.50"), computed exactly in minor units. */
const DIGITS: Record<string, number> = { USD: 2, KHR: 0 }

export const digitsOf = (currency: string) => DIGITS[currency] ?? 2

export const toMinor = (amount: string, currency: string): bigint => {
  const digits = digitsOf(currency)
  const [whole = "0", fraction = ""] = amount.split(".")
  return BigInt(whole + fraction.padEnd(digits, "0").slice(0, digits))
}

export const fromMinor = (minor: bigint, currency: string): string => {
  const digits = digitsOf(currency)
  if (digits === 0) return minor.toString()
  const text = minor.toString().padStart(digits + 1, "0")
  return `${text.slice(0, -digits)}.${text.slice(-digits)}`
}

/** What can still be refunded of a payment. */
export const remainingRefundable = (payment: { readonly amount: string; readonly amount_refunded: string; readonly currency: string }) =>
  fromMinor(toMinor(payment.amount, payment.currency) - toMinor(payment.amount_refunded, payment.currency), payment.currency)
