/**
 * The role table, written out as the product promises it to merchants (the console shows this matrix and the
 * routes enforce it). A change to a grant changes this table on purpose, or it is a mistake this test catches.
 */
import { describe, expect, it } from "@effect/vitest"
import { Permissions, type Permission, type Role, Roles } from "../../domain/Access.ts"
import { accessMatrix, roleAllows } from "../../src/access/Policy.ts"

//                                   owner  admin  developer  analyst
const expected: Record<Permission, readonly [boolean, boolean, boolean, boolean]> = {
  "organization.read":              [true,  true,  true,      true],
  "member.manage":                  [true,  true,  false,     false],
  "verification.submit":            [true,  true,  false,     false],
  "store.read":                     [true,  true,  true,      true],
  "store.create":                   [true,  true,  false,     false],
  "store.update":                   [true,  true,  false,     false],
  "store.credentials.manage":       [true,  true,  false,     false],
  "store.live_mode.manage":         [true,  true,  false,     false],
  "api_key.read":                   [true,  true,  true,      true],
  "api_key.manage":                 [true,  true,  true,      false],
  "webhook.read":                   [true,  true,  true,      true],
  "webhook.manage":                 [true,  true,  true,      false],
  "payment.read":                   [true,  true,  true,      true],
  "payment.write":                  [true,  true,  true,      false],
  "payment.refund":                 [true,  true,  false,     false],
  "payment.refund.high_value":      [true,  false, false,     false],
  "customer.read":                  [true,  true,  true,      true],
  "customer.write":                 [true,  true,  false,     false],
  "customer.erase":                 [true,  true,  false,     false],
  "marketing.manage":               [true,  true,  false,     false],
  "promotion.approve":              [true,  false, false,     false],
  "analytics.read":                 [true,  true,  true,      true],
  "risk.manage":                    [true,  true,  false,     false],
  "integration.manage":             [true,  true,  true,      false],
  "billing.manage":                 [true,  false, false,     false]
}

const roleOrder: ReadonlyArray<Role> = ["owner", "admin", "developer", "analyst"]

describe("role table", () => {
  it("lists every permission of the catalogue and every role", () => {
    expect(Object.keys(expected).sort()).toEqual([...Permissions].sort())
    expect([...roleOrder].sort()).toEqual([...Roles].sort())
  })

  for (const permission of Permissions) {
    it(`grants ${permission} as the table says`, () => {
      const granted = roleOrder.map((role) => roleAllows(role, permission))
      expect(granted).toEqual([...expected[permission]])
    })
  }

  it("the matrix the console shows is the policy the routes enforce", () => {
    for (const row of accessMatrix()) {
      for (const role of Roles) expect(row.roles[role]).toBe(roleAllows(role, row.permission))
    }
  })
})
