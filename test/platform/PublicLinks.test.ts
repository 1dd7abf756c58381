/**
 * The tokens of public customer links, as pure functions: at least 128 bits, the same for the same inputs
 * (so a link can be handed out again), different for another purpose, subject, link version or master key,
 * and compared without failing on a missing or oddly sized token.
 */
import { describe, expect, it } from "@effect/vitest"
import { linkKeyOf, linkToken, sameToken } from "../../src/platform/PublicLinks.ts"

const key = linkKeyOf(new Uint8Array(32).fill(7))

describe("public link tokens", () => {
  it("are 192 bits of base64url, stable for the same purpose, subject and version", () => {
    const token = linkToken(key, "customer", "cus_3kTMd92JxQeLp0aZ7yNcB1vW", 0)
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(Buffer.from(token, "base64url").length * 8).toBeGreaterThanOrEqual(128)
    expect(linkToken(key, "customer", "cus_3kTMd92JxQeLp0aZ7yNcB1vW", 0)).toBe(token)
  })

  it("differ by purpose, subject, version and master key", () => {
    const base = linkToken(key, "customer", "cus_a", 0)
    const others = [
      linkToken(key, "card", "cus_a", 0),
      linkToken(key, "customer", "cus_b", 0),
      linkToken(key, "customer", "cus_a", 1),
      linkToken(linkKeyOf(new Uint8Array(32).fill(8)), "customer", "cus_a", 0)
    ]
    expect(new Set([base, ...others]).size).toBe(5)
    // The link key is not the master key itself.
    expect(Buffer.from(key).equals(Buffer.from(new Uint8Array(32).fill(7)))).toBe(false)
  })

  it("match only the same token; a missing, shorter or longer one is simply wrong", () => {
    const token = linkToken(key, "card", "play_a", 3)
    expect(sameToken(token, token)).toBe(true)
    expect(sameToken(token, undefined)).toBe(false)
    expect(sameToken(token, "")).toBe(false)
    expect(sameToken(token, token.slice(1))).toBe(false)
    expect(sameToken(token, `${token}x`)).toBe(false)
    expect(sameToken(token, linkToken(key, "card", "play_a", 4))).toBe(false)
  })
})
