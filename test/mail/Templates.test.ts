/**
 * The mail templates: user text never becomes markup, amounts read as customers expect them, and a
 * customer's language picks Khmer where it is known.
 */
import { describe, expect, it } from "@effect/vitest"
import { customerLanguage, formatMoney, html, invitation, receipt, refundNotice, safeColor } from "../../src/mail/Templates.ts"

const facts = {
  language: "en" as const,
  storeName: "<img src=x onerror=alert(1)>",
  storeColor: "red;background:url(https://evil.example)",
  amount: "1234.5",
  currency: "USD",
  referenceId: "\"><script>",
  description: "a & b",
  at: new Date("2026-03-01T08:30:00Z"),
  receiptUrl: "https://pay.example/receipts/pay_1?x=\"y\"",
  livemode: true
}

describe("mail templates", () => {
  it("escapes every interpolated value, and nests fragments made by the tag", () => {
    expect(html`<p>${"<b>&\"'"}</p>`.value).toBe("<p>&lt;b&gt;&amp;&quot;&#39;</p>")
    expect(html`<div>${html`<i>${"<x>"}</i>`}</div>`.value).toBe("<div><i>&lt;x&gt;</i></div>")
    expect(html`${["<a>", null, undefined, false]}`.value).toBe("&lt;a&gt;")
  })

  it("lets no store, customer or organization text become markup", () => {
    const mail = receipt(facts)
    expect(mail.html).not.toContain("<img src=x")
    expect(mail.html).not.toContain("<script>")
    expect(mail.html).toContain("&lt;img src=x onerror=alert(1)&gt;")
    expect(mail.html).toContain("https://pay.example/receipts/pay_1?x=&quot;y&quot;")
    // A colour that is not #rrggbb is the product's blue.
    expect(mail.html).not.toContain("evil.example")
    expect(safeColor("#A1b2C3")).toBe("#A1b2C3")
    expect(mail.text).toContain("Amount: $1,234.50")
    expect(mail.subject).toBe("Your receipt from <img src=x onerror=alert(1)>")
    const invite = invitation({ organizationName: "</a><a href=evil>", role: "admin", invitedBy: null, link: "https://x.example/console", expiresAt: new Date(0) })
    expect(invite.html).not.toContain("<a href=evil>")
    expect(invite.text).toContain("An administrator invited you")
  })

  it("formats USD with cents and KHR whole with the riel sign", () => {
    expect(formatMoney("12.5", "USD")).toBe("$12.50")
    expect(formatMoney("1000000", "KHR")).toBe("៛1,000,000")
    expect(formatMoney("0.05", "USD")).toBe("$0.05")
  })

  it("speaks Khmer to a customer known to, English otherwise", () => {
    expect(customerLanguage({ language: "km" })).toBe("km")
    expect(customerLanguage({ locale: "km-KH" })).toBe("km")
    expect(customerLanguage({ language: "en" })).toBe("en")
    expect(customerLanguage({ language: "kmx" })).toBe("en")
    expect(customerLanguage(null)).toBe("en")
    const khmer = refundNotice({ ...facts, language: "km", currency: "KHR", amount: "40000", refundAmount: "10000", livemode: false })
    expect(khmer.subject.startsWith("[Test] ការសងប្រាក់វិញពី")).toBe(true)
    expect(khmer.text).toContain("៛10,000")
    expect(khmer.html).toContain('<html lang="km">')
  })
})
