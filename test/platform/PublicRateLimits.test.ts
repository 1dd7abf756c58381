/**
 * The limits of the public and unauthenticated routes over HTTP, with small limits: hosted play and card
 * reveal, payment-link pay, the referral landing pages, forgot-password and verification resend. Each
 * answers 429 `rate_limited` in the shared envelope with Retry-After past its limit, per client address
 * (requests come from different loopback addresses) and per subject.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { CustomerId } from "../../domain/Ids.ts"
import { signUp, uniqueEmail } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { type AnswerFrom, callFrom } from "../support/Http.ts"
import { newMerchant } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const LIMITS = {
  publicPageViewsPerAddressPerMinute: 5,
  hostedPlaysPerAddressPerMinute: 6,
  hostedPlaysPerCustomerPerMinute: 2,
  cardRevealsPerPlayPerMinute: 2,
  linkPaymentsPerAddressPerMinute: 3,
  linkPaymentsPerLinkPerMinute: 5,
  referralVisitsPerAddressPerMinute: 4,
  referralVisitsPerCodePerMinute: 6,
  passwordResetsPerAddressPerHour: 4,
  passwordResetsPerEmailPerHour: 2,
  verificationResendsPerAddressPerHour: 4,
  verificationResendsPerEmailPerHour: 2
} as const

let subnets = 10
/** Loopback addresses of their own (127.0.N.1, 127.0.N.2, …) for one test, so tests never share an address's count. */
const newAddresses = () => {
  const subnet = ++subnets
  return (host: number) => `127.0.${subnet}.${host}`
}

/** A 429 in the shared envelope, with a Retry-After of at most `windowSeconds`. */
const expectRateLimited = (answer: AnswerFrom, windowSeconds: number) => {
  expect(answer.status).toBe(429)
  expect(answer.body).toEqual({ error: { code: "rate_limited", message: expect.stringMatching(/try again in \d+ seconds/) } })
  const seconds = Number(answer.retryAfter)
  expect(Number.isInteger(seconds)).toBe(true)
  expect(seconds).toBeGreaterThan(0)
  expect(seconds).toBeLessThanOrEqual(windowSeconds)
}

const statuses = (answers: ReadonlyArray<AnswerFrom>) => answers.map((answer) => answer.status)

const newCustomer = (app: TestAppShape, key: string) =>
  Effect.flatMap(clientAs(app, key), (api) =>
    api.customers.create({ payload: { email: uniqueEmail("shopper"), name: "Sokha Chan" }, headers: {} }))

describe("public route limits", () => {
  layer(testAppLayer({ rateLimits: LIMITS }), { timeout: 120_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("hosted plays are limited per customer and per address; card reveals per card", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const merchant = yield* newMerchant(app)
        const dashboard = yield* clientAs(app, merchant.owner.token)
        const prizes = [{ name: "Better luck next time", kind: "nothing", weight: 1 }] as const
        const spin = yield* dashboard.gamesConsole.create({
          path: { storeId: merchant.storeId },
          payload: { name: "Wheel", type: "spin", max_plays_per_customer: null, prizes }
        })
        const [first, second, third] = yield* Effect.all(Array.from({ length: 3 }, () => newCustomer(app, merchant.key)))
        // Hosted play opens with the customer's public token, the `t` of its wallet_url.
        const tokens = new Map([first!, second!, third!].map((c) => [c.id, new URL(c.wallet_url).searchParams.get("t")!]))
        const play = (address: string, customer: CustomerId) =>
          callFrom(app, address, "POST", `/play/game/${spin.id}/play?c=${customer}&t=${tokens.get(customer)}`)

        // One customer: two plays a minute; the third is refused.
        expect(statuses([yield* play(at(1), first!.id), yield* play(at(1), first!.id)])).toEqual([201, 201])
        expectRateLimited(yield* play(at(1), first!.id), 60)
        // From another address too: the limit is the customer's.
        expectRateLimited(yield* play(at(2), first!.id), 60)
        // Other customers from the first address, up to the address's six requests a minute.
        expect(statuses([yield* play(at(1), second!.id), yield* play(at(1), second!.id), yield* play(at(1), third!.id)]))
          .toEqual([201, 201, 201])
        expectRateLimited(yield* play(at(1), third!.id), 60)
        // The third customer, elsewhere, still has a play left.
        expect((yield* play(at(3), third!.id)).status).toBe(201)

        const scratch = yield* dashboard.gamesConsole.create({
          path: { storeId: merchant.storeId },
          payload: { name: "Scratch", type: "scratch", max_plays_per_customer: null, prizes }
        })
        const card = yield* dashboard.gamesConsole.issue({ path: { gameId: scratch.id }, payload: { customer_id: first!.id } })
        const cardUrl = new URL(card.card_url)
        const reveal = (address: string) => callFrom(app, address, "POST", `${cardUrl.pathname}/reveal${cardUrl.search}`)
        expect(statuses([yield* reveal(at(4)), yield* reveal(at(5))])).toEqual([201, 201])
        expectRateLimited(yield* reveal(at(6)), 60)
      }))

    it.effect("payments through a public link are limited per address, then per link", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const merchant = yield* newMerchant(app)
        const link = yield* (yield* clientAs(app, merchant.owner.token)).links.create({
          path: { storeId: merchant.storeId },
          payload: { kind: "link", title: "Iced latte", amount: "3.50", currency: "USD" }
        })
        const pay = (address: string) => callFrom(app, address, "POST", `/links/${link.id}/pay`, { body: {} })

        expect(statuses([yield* pay(at(1)), yield* pay(at(1)), yield* pay(at(1))])).toEqual([201, 201, 201])
        expectRateLimited(yield* pay(at(1)), 60)
        // The refused request did not count for the link: two more from elsewhere make its five.
        expect(statuses([yield* pay(at(2)), yield* pay(at(2))])).toEqual([201, 201])
        expectRateLimited(yield* pay(at(2)), 60)
        expectRateLimited(yield* pay(at(3)), 60)
      }))

    it.effect("public pages (checkout, receipt, link, wallet, game, card) share one limit per address", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const link = yield* (yield* clientAs(app, merchant.owner.token)).links.create({
          path: { storeId: merchant.storeId },
          payload: { kind: "link", title: "Iced latte", amount: "3.50", currency: "USD" }
        })
        const wallet = new URL(customer.wallet_url)
        const pages = [`/links/${link.id}`, `${wallet.pathname}${wallet.search}`, "/checkout/pay_unknown", "/receipts/pay_unknown", "/play/game/game_unknown"]
        // Five reads from one address, whatever they open (unknown ids count too: walking ids is the attack).
        expect(statuses(yield* Effect.forEach(pages, (page) => callFrom(app, at(1), "GET", page))))
          .toEqual([200, 200, 404, 404, 404])
        expectRateLimited(yield* callFrom(app, at(1), "GET", `${wallet.pathname}${wallet.search}`), 60)
        expectRateLimited(yield* callFrom(app, at(1), "GET", "/play/play_unknown?t=x"), 60)
        expectRateLimited(yield* callFrom(app, at(1), "GET", "/auth/verify-email?token=guess"), 60)
        expectRateLimited(yield* callFrom(app, at(1), "POST", "/auth/reset-password", { body: { token: "guess", password: "a new long password" } }), 60)
        // Another address is not held back.
        expect((yield* callFrom(app, at(2), "GET", `/links/${link.id}`)).status).toBe(200)
      }))

    it.effect("the referral landing pages are limited per address, known codes or not, and per code", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const merchant = yield* newMerchant(app)
        yield* (yield* clientAs(app, merchant.owner.token)).referralsConsole.configure({
          path: { storeId: merchant.storeId },
          payload: { active: true, referrer_points: 500, referee_points: 200 }
        })
        const customer = yield* newCustomer(app, merchant.key)
        const { code } = yield* (yield* clientAs(app, merchant.key)).referrals.code({ path: { id: customer.id } })

        // Guessing codes from one address: unknown codes count too.
        const guesses = yield* Effect.forEach(["AAAAAAAA", "BBBBBBBB", "CCCCCCCC", "DDDDDDDD"], (guess) =>
          callFrom(app, at(1), "GET", `/r/${guess}`))
        expect(statuses(guesses)).toEqual([404, 404, 404, 404])
        expectRateLimited(yield* callFrom(app, at(1), "GET", `/r/${code}`), 60)
        expectRateLimited(yield* callFrom(app, at(1), "GET", `/r/${code}/join`), 60)

        // One code: six requests a minute from anywhere (a visit is the share link and the join page).
        for (const host of [2, 3, 4]) {
          const share = yield* callFrom(app, at(host), "GET", `/r/${code}`)
          const join = yield* callFrom(app, at(host), "GET", `/r/${code.toLowerCase()}/join`)
          expect(statuses([share, join])).toEqual([302, 200])
        }
        expectRateLimited(yield* callFrom(app, at(5), "GET", `/r/${code}`), 60)
      }))

    it.effect("forgot-password is limited per e-mail in any case, known or not, and per address", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const owner = yield* Effect.promise(() => signUp(app))
        const forgot = (address: string, email: string) =>
          callFrom(app, address, "POST", "/auth/forgot-password", { body: { email } })

        const [local, domain] = owner.email.split("@") as [string, string]
        const spellings = [owner.email, `${local.toUpperCase()}@${domain}`, `${local}@${domain.toUpperCase()}`]
        expect(statuses([yield* forgot(at(1), spellings[0]!), yield* forgot(at(2), spellings[1]!)])).toEqual([201, 201])
        const refusedKnown = yield* forgot(at(3), spellings[2]!)
        expectRateLimited(refusedKnown, 3600)

        // An e-mail without an account is counted and refused alike.
        const nobody = uniqueEmail("nobody")
        expect(statuses([yield* forgot(at(4), nobody), yield* forgot(at(5), nobody)])).toEqual([201, 201])
        const refusedUnknown = yield* forgot(at(6), nobody)
        expectRateLimited(refusedUnknown, 3600)
        expect(refusedUnknown.body).toEqual(refusedKnown.body)

        // One address: four requests an hour, whatever the e-mails.
        const fromOne = yield* Effect.forEach([1, 2, 3, 4], () => forgot(at(7), uniqueEmail("many")))
        expect(statuses(fromOne)).toEqual([201, 201, 201, 201])
        expectRateLimited(yield* forgot(at(7), uniqueEmail("many")), 3600)
      }))

    it.effect("verification resends are limited per e-mail and per address", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const at = newAddresses()
        const users = yield* Effect.all(Array.from({ length: 3 }, () => Effect.promise(() => signUp(app, { verifyEmail: false }))))
        const resend = (address: string, token: string) =>
          callFrom(app, address, "POST", "/auth/verify-email/resend", { token })

        const [first, second, third] = users as [typeof users[0], typeof users[0], typeof users[0]]
        expect(statuses([yield* resend(at(1), first.token), yield* resend(at(2), first.token)])).toEqual([201, 201])
        expectRateLimited(yield* resend(at(3), first.token), 3600)
        // Four an hour from one address: the first user's refused request counted there too.
        const fromThird = [yield* resend(at(3), second.token), yield* resend(at(3), second.token), yield* resend(at(3), third.token)]
        expect(statuses(fromThird)).toEqual([201, 201, 201])
        expectRateLimited(yield* resend(at(3), third.token), 3600)
        expect((yield* resend(at(4), third.token)).status).toBe(201)
      }))
  })
})
