/** The text of each notification, from the object its event carries (amounts as decimal strings). */
import { describe, expect, it } from "@effect/vitest"
import { renderMessage } from "../../src/notifications/Render.ts"

describe("notification text", () => {
  it("renders payments, refunds, redemptions and risk cases", () => {
    expect(renderMessage("payment.completed", { id: "pay_1", amount: "12.50", currency: "USD", reference_id: "order-1" }))
      .toBe("Payment received: 12.50 USD (pay_1, order order-1)")
    expect(renderMessage("payment.completed", { id: "pay_2", amount: "40000", currency: "KHR", reference_id: null }))
      .toBe("Payment received: 40000 KHR (pay_2)")
    expect(renderMessage("payment.refunded", { id: "pay_1", amount: "12.50", amount_refunded: "2.50", currency: "USD" }))
      .toBe("Payment refunded: 2.50 USD of 12.50 USD (pay_1)")
    expect(renderMessage("loyalty.redemption.created", { id: "rdm_1", points: 500, customer_id: "cus_1" }))
      .toBe("Reward redeemed: 500 points by customer cus_1 (rdm_1)")
    expect(renderMessage("risk.case_opened", { id: "risk_1", kind: "velocity", subject: { type: "customer", id: "cus_9" } }))
      .toBe("Risk case opened: velocity on customer cus_9 (risk_1)")
    expect(renderMessage("test.message", {})).toMatch(/^Test message/)
    expect(renderMessage("payment.completed", null)).toBe("Payment received: ? ()")
  })
})
