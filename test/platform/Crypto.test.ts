import { describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { Cause, Effect, Exit, Layer } from "effect"
import * as fc from "fast-check"
import {
  decryptSecret,
  DecryptionFailed,
  encryptSecret,
  hashToken,
  maskSecret,
  MasterKey,
  randomBase62,
  randomToken,
  SecretBox,
  tokensMatch
} from "../../src/platform/Crypto.ts"

const masterKey = new Uint8Array(randomBytes(32))
const otherKey = new Uint8Array(randomBytes(32))
const BASE64URL_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const BASE62_CHARACTERS = [..."0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"]

const openSync = (key: Uint8Array, sealed: string) => Effect.runSync(Effect.either(decryptSecret(key, sealed)))

const expectDecryptionFailure = (key: Uint8Array, sealed: string) => {
  const result = openSync(key, sealed)
  expect(result._tag).toBe("Left")
  if (result._tag === "Left") expect(result.left).toBeInstanceOf(DecryptionFailed)
}

describe("randomBase62", () => {
  it("draws only [0-9A-Za-z], in the requested length", () => {
    for (const length of [0, 1, 24, 43, 1000]) {
      const value = randomBase62(length)
      expect(value).toHaveLength(length)
      expect(value).toMatch(/^[0-9A-Za-z]*$/)
    }
  })

  it("is not biased towards the first characters of the alphabet", () => {
    // Without rejection sampling, `byte % 62` makes the first 8 characters 25% more likely
    // (about 12,500 against 10,000 here); six standard deviations of a fair draw are 600.
    const sample = randomBase62(620_000)
    const counts = new Map<string, number>()
    for (const character of sample) counts.set(character, (counts.get(character) ?? 0) + 1)
    expect(counts.size).toBe(62)
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(9_400)
      expect(count).toBeLessThan(10_600)
    }
  })
})

describe("encryptSecret / decryptSecret", () => {
  it("round-trips any Unicode text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (plaintext) => {
        expect(Effect.runSync(decryptSecret(masterKey, encryptSecret(masterKey, plaintext)))).toBe(plaintext)
      })
    )
  })

  it("writes the versioned text v1.<iv>.<tag>.<ciphertext>", () => {
    const sealed = encryptSecret(masterKey, "JBSWY3DPEHPK3PXP")
    const [version, iv, tag, ciphertext] = sealed.split(".")
    expect(version).toBe("v1")
    expect(Buffer.from(iv!, "base64url")).toHaveLength(12)
    expect(Buffer.from(tag!, "base64url")).toHaveLength(16)
    expect(Buffer.from(ciphertext!, "base64url")).toHaveLength(16)
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
  })

  it("seals an empty text too", () => {
    expect(openSync(masterKey, encryptSecret(masterKey, ""))).toMatchObject({ _tag: "Right", right: "" })
  })

  it("never seals one text the same way twice", () => {
    const first = encryptSecret(masterKey, "same secret")
    const second = encryptSecret(masterKey, "same secret")
    expect(first).not.toBe(second)
    expect(first.split(".")[1]).not.toBe(second.split(".")[1])
  })

  it("fails under another key", () => {
    expectDecryptionFailure(otherKey, encryptSecret(masterKey, "provider credential"))
  })

  it("fails when any character of the sealed text is changed", () => {
    const sealed = encryptSecret(masterKey, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    for (let index = 0; index < sealed.length; index++) {
      for (const replacement of [...BASE64URL_CHARACTERS, ".", "="]) {
        if (replacement === sealed[index]) continue
        expectDecryptionFailure(masterKey, sealed.slice(0, index) + replacement + sealed.slice(index + 1))
      }
    }
  })

  it("fails when any bit of the iv, tag or ciphertext is flipped", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", minLength: 1, maxLength: 64 }),
        fc.integer({ min: 1, max: 3 }),
        fc.nat(),
        fc.integer({ min: 0, max: 7 }),
        (plaintext, partIndex, byteSeed, bit) => {
          const parts = encryptSecret(masterKey, plaintext).split(".")
          const bytes = Buffer.from(parts[partIndex]!, "base64url")
          const byteIndex = byteSeed % bytes.length
          bytes[byteIndex] = bytes[byteIndex]! ^ (1 << bit)
          parts[partIndex] = bytes.toString("base64url")
          expectDecryptionFailure(masterKey, parts.join("."))
        }
      )
    )
  })

  it("fails when parts are truncated, added or swapped", () => {
    const sealed = encryptSecret(masterKey, "secret")
    const [version, iv, tag, ciphertext] = sealed.split(".") as [string, string, string, string]
    for (
      const forged of [
        "",
        "v1",
        `${version}.${iv}.${tag}`,
        `${sealed}.extra`,
        `${version}.${tag}.${iv}.${ciphertext}`,
        `${version}.${iv}.${tag}.${ciphertext.slice(0, -1)}`,
        `${version}.${iv}.${tag}.`,
        `${version}.${iv}=.${tag}.${ciphertext}`
      ]
    ) {
      expectDecryptionFailure(masterKey, forged)
    }
  })

  it("fails for a version it does not know", () => {
    const sealed = encryptSecret(masterKey, "secret")
    const result = openSync(masterKey, sealed.replace(/^v1\./, "v2."))
    expect(result).toMatchObject({ _tag: "Left", left: { _tag: "DecryptionFailed" } })
    if (result._tag === "Left") expect(result.left.message).toContain("v2")
  })

  it("treats a master key of the wrong size as a bug", () => {
    expect(() => encryptSecret(new Uint8Array(16), "secret")).toThrow(/32 bytes/)
    const exit = Effect.runSyncExit(decryptSecret(new Uint8Array(16), encryptSecret(masterKey, "secret")))
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
  })
})

describe("SecretBox", () => {
  const masterKeyLayer = (key: Uint8Array) => Layer.succeed(MasterKey, { key })
  const withKey = (key: Uint8Array) => Effect.provide(SecretBox.Default.pipe(Layer.provide(masterKeyLayer(key))))

  it.effect("seals and opens under the master key", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const sealed = yield* box.seal("otp secret JBSWY3DPEHPK3PXP")
      expect(sealed.startsWith("v1.")).toBe(true)
      expect(sealed).not.toContain("JBSWY3DPEHPK3PXP")
      expect(yield* box.open(sealed)).toBe("otp secret JBSWY3DPEHPK3PXP")
    }).pipe(withKey(masterKey)))

  it.effect("dies when stored data does not open: corruption is not a caller's error", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const sealedElsewhere = encryptSecret(otherKey, "secret")
      const exit = yield* Effect.exit(box.open(sealedElsewhere))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.squash(exit.cause)).toBeInstanceOf(DecryptionFailed)
      }
    }).pipe(withKey(masterKey)))

  it.effect("refuses to start with a master key of the wrong size", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(SecretBox.pipe(withKey(new Uint8Array(31))))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }))
})

describe("tokens", () => {
  it("randomToken spells 32 bytes of entropy as 43 base62 characters", () => {
    const token = randomToken()
    expect(token).toMatch(/^[0-9A-Za-z]{43}$/)
    expect(randomToken(16)).toMatch(/^[0-9A-Za-z]{22}$/)
    expect(new Set(Array.from({ length: 1000 }, () => randomToken())).size).toBe(1000)
  })

  it("hashToken is the SHA-256 hex digest", () => {
    expect(hashToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(hashToken(randomToken())).toMatch(/^[0-9a-f]{64}$/)
  })

  it("tokensMatch accepts the token whose hash is stored", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (token) => {
        expect(tokensMatch(token, hashToken(token))).toBe(true)
      })
    )
  })

  it("tokensMatch rejects any other token", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (token, other) => {
        fc.pre(token !== other)
        expect(tokensMatch(other, hashToken(token))).toBe(false)
      })
    )
  })

  it("tokensMatch answers false, without throwing, for stored hashes of another shape", () => {
    const token = randomToken()
    const stored = hashToken(token)
    for (const malformed of ["", stored.slice(0, 63), `${stored}0`, stored.toUpperCase(), token]) {
      expect(tokensMatch(token, malformed)).toBe(false)
    }
  })
})

describe("maskSecret", () => {
  const MASK = "*"

  it("keeps the label and the last four characters", () => {
    const secret = `sk_test_${"a".repeat(39)}Xy12`
    expect(maskSecret(secret)).toBe(`sk_test_${"*".repeat(39)}Xy12`)
    expect(maskSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).toBe(`whsec_${"*".repeat(28)}LaSw`)
  })

  it("keeps only the last four characters of an unlabelled secret", () => {
    expect(maskSecret("JBSWY3DPEHPK3PXPabcd")).toBe(`${"*".repeat(16)}abcd`)
  })

  it("masks short secrets entirely", () => {
    expect(maskSecret("")).toBe("")
    expect(maskSecret("abc")).toBe("***")
    expect(maskSecret("sk_test_abcdef")).toBe("*".repeat(14))
  })

  it("does not mistake random material before an underscore for a label", () => {
    expect(maskSecret("Zx9_Kq2-Lm4_Pw8Tn6Rv3Yb5")).toBe(`${"*".repeat(20)}3Yb5`)
  })

  it("never shows more than the label and four characters of a token, and keeps the length", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("", "sk_test_", "sk_live_", "whsec_"),
        fc.string({ unit: fc.constantFrom(...BASE62_CHARACTERS), maxLength: 80 }),
        (label, token) => {
          const secret = label + token
          const masked = maskSecret(secret)
          expect(masked).toHaveLength(secret.length)
          const shown = Array.from(masked).filter((character) => character !== "*").length
          expect(shown).toBeLessThanOrEqual(label.length + 4)
          if (token.length >= 16) expect(masked.endsWith(token.slice(-4))).toBe(true)
        }
      )
    )
  })

  it("reveals nothing after the last underscore but four characters, whatever the input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary-ascii", maxLength: 80 }), (secret) => {
        const masked = maskSecret(secret)
        expect(masked).toHaveLength(secret.length)
        Array.from(masked).forEach((character, index) => expect([MASK, secret[index]]).toContain(character))
        const labelEnd = secret.lastIndexOf("_") + 1
        expect(Array.from(masked.slice(labelEnd)).filter((character) => character !== MASK).length)
          .toBeLessThanOrEqual(4)
      })
    )
  })
})
