/**
 * The sign-in limits over HTTP with small limits (3 failures per e-mail and address, 8 per address, 12 per
 * e-mail): an e-mail with an account and one without answer alike, failure after failure; one address's
 * failures on one account leave the others behind that address alone up to the far higher per-address
 * ceiling; and a correct password after many failures is answered without waiting.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { signUp, uniqueEmail } from "../support/Accounts.ts"
import { type AnswerFrom, callFrom } from "../support/Http.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const LIMITS = { loginFailuresPerEmailAndAddress: 3, loginFailuresPerAddress: 8, loginFailuresPerEmail: 12 } as const
const WRONG = "not the password at all"

let subnets = 40
/** Loopback addresses of their own (127.0.N.1, 127.0.N.2, …) for one test. */
const newAddresses = () => {
  const subnet = ++subnets
  return (host: number) => `127.0.${subnet}.${host}`
}

const login = (app: TestAppShape, address: string, email: string, password: string) =>
  callFrom(app, address, "POST", "/auth/login", { body: { email, password } })

/**
 * What an answer says, without its timing: status and body, with the seconds left of a block rounded to
 * tens (two answers a few milliseconds apart may fall either side of a second).
 */
const said = (answer: AnswerFrom) => ({
  status: answer.status,
  retryAfter: answer.retryAfter === undefined ? undefined : Math.round(Number(answer.retryAfter) / 10),
  body: JSON.parse(JSON.stringify(answer.body).replace(/in (\d+) seconds/, (_, seconds) => `in ~${Math.round(Number(seconds) / 10)}0 seconds`))
})

describe("sign-in limits", () => {
  layer(testAppLayer({ rateLimits: LIMITS }), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("an e-mail with an account and one without answer alike, failure after failure", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const user = yield* Effect.promise(() => signUp(app))
        const nobody = uniqueEmail("nobody")

        // Four addresses, four attempts each for both e-mails: three failures, then the pair's block; the
        // twelfth failure of each e-mail (the last address's third) blocks it everywhere.
        const answers: Array<{ readonly known: AnswerFrom; readonly unknown: AnswerFrom }> = []
        for (const host of [1, 2, 3, 4]) {
          for (let attempt = 0; attempt < 4; attempt++) {
            const known = yield* login(app, at(host), user.email, WRONG)
            const unknown = yield* login(app, at(host), nobody, WRONG)
            answers.push({ known, unknown })
          }
        }
        for (const { known, unknown } of answers) expect(said(unknown)).toEqual(said(known))
        expect(answers.map(({ known }) => known.status)).toEqual([401, 401, 401, 429, 401, 401, 401, 429, 401, 401, 401, 429, 401, 401, 401, 429])
        expect(answers[3]!.known.body).toEqual({ error: { code: "rate_limited", message: expect.stringMatching(/try again in \d+ seconds/) } })
        expect(Number(answers[3]!.known.retryAfter)).toBeGreaterThan(800)
        // Neither slows down: no answer waits for more than its password check (a generous bound for a
        // loaded machine; the waits this catches are seconds).
        const slowest = Math.max(...answers.flatMap(({ known, unknown }) => [known.millis, unknown.millis]))
        expect(slowest).toBeLessThan(1500)

        // Both e-mails are now blocked everywhere, alike, even with the right password for the account.
        const elsewhereKnown = yield* login(app, at(5), user.email, user.password)
        const elsewhereUnknown = yield* login(app, at(5), nobody, user.password)
        expect(elsewhereKnown.status).toBe(429)
        expect(said(elsewhereUnknown)).toEqual(said(elsewhereKnown))
      }))

    it.effect("one address failing on one account does not lock another behind it until the address's ceiling", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const guessed = yield* Effect.promise(() => signUp(app))
        const colleague = yield* Effect.promise(() => signUp(app))
        const office = at(1)

        for (let attempt = 0; attempt < 3; attempt++) {
          expect((yield* login(app, office, guessed.email, WRONG)).status).toBe(401)
        }
        expect((yield* login(app, office, guessed.email, guessed.password)).status).toBe(429)
        // The colleague behind the same address signs in.
        expect((yield* login(app, office, colleague.email, colleague.password)).status).toBe(201)

        // Five failures more (on other e-mails) make the address's eight: now every account is refused there …
        for (let attempt = 0; attempt < 5; attempt++) {
          expect((yield* login(app, office, uniqueEmail("typo"), WRONG)).status).toBe(401)
        }
        const refused = yield* login(app, office, colleague.email, colleague.password)
        expect(refused.status).toBe(429)
        expect(refused.body.error.code).toBe("rate_limited")
        expect(Number(refused.retryAfter)).toBeGreaterThan(0)
        // … and still welcome from anywhere else.
        expect((yield* login(app, at(2), colleague.email, colleague.password)).status).toBe(201)
      }))

    it.effect("a correct password after many failures from many addresses answers without waiting", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const user = yield* Effect.promise(() => signUp(app))
        const before = yield* login(app, at(1), user.email, user.password)
        expect(before.status).toBe(201)

        // Ten failures from five addresses: under every limit (two per address, ten of the e-mail's twelve).
        for (const host of [2, 3, 4, 5, 6]) {
          for (let attempt = 0; attempt < 2; attempt++) {
            expect((yield* login(app, at(host), user.email, WRONG)).status).toBe(401)
          }
        }
        const after = yield* login(app, at(7), user.email, user.password)
        expect(after.status).toBe(201)
        // The limits add no wait: the answer takes one password check, as before the failures (a generous
        // bound for a loaded machine; a wait for the failures would be seconds).
        expect(after.millis, `${after.millis.toFixed(0)} ms after the failures, ${before.millis.toFixed(0)} ms before`)
          .toBeLessThan(Math.max(1500, before.millis + 250))
      }))
  })
})
