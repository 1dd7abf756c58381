/**
 * Public customer links over HTTP against PostgreSQL: a customer id or a play id opens nothing; the wallet
 * and hosted play need the customer's token (from `wallet_url`), a card needs its own (from `card_url`) and
 * opens nothing else; revocation and erasure replace the token; the public wallet and card show no other
 * customer's id, payment id or merchant's note, and voucher codes only behind the credential of the
 * customer who holds them.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { CreateGame } from "../../domain/Games.ts"
import type { CustomerId } from "../../domain/Ids.ts"
import { clientAs, expectFailure } from "../support/Client.ts"
import { makeCall } from "../support/Http.ts"
import { type Merchant, newMerchant, paidPayment } from "../support/Merchant.ts"
import { TestApp, type TestAppShape, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

let serial = 0
const freshEmail = () => `link-${Date.now().toString(36)}-${++serial}@example.test`

const newCustomer = (app: TestAppShape, key: string, extra: { name?: string; referral_code?: string } = {}) =>
  Effect.flatMap(clientAs(app, key), (api) => api.customers.create({ payload: { email: freshEmail(), ...extra }, headers: {} }))

/** The path and query of a link the API handed out, to open it on the test app. */
const pathOf = (url: string) => {
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}
const tokenOf = (url: string) => new URL(url).searchParams.get("t") ?? ""

/** The links' origin: PUBLIC_BASE_URL is unset in tests, so http://localhost:<the port bound>. */
const publicOrigin = (app: TestAppShape) => `http://localhost:${new URL(app.baseUrl).port}`

const BROWSER = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" }

const createGame = (app: TestAppShape, merchant: Merchant, payload: CreateGame) =>
  Effect.flatMap(clientAs(app, merchant.owner.token), (api) => api.gamesConsole.create({ path: { storeId: merchant.storeId }, payload }))

const issueCard = (app: TestAppShape, merchant: Merchant, gameId: string, customerId: CustomerId) =>
  call(app, "POST", `/dashboard/games/${gameId}/issue`, { token: merchant.owner.token, body: { customer_id: customerId } })

/** Waits until the customer's balance is `balance` (credits run behind the requests, from the outbox). */
const balanceBecomes = (app: TestAppShape, key: string, id: CustomerId, balance: number) =>
  Effect.gen(function*() {
    const api = yield* clientAs(app, key)
    for (let attempt = 0; attempt < 150; attempt++) {
      if ((yield* api.customers.retrieve({ path: { id } })).points_balance === balance) return
      yield* Effect.sleep("100 millis")
    }
    return expect.fail(`the balance of ${id} never became ${balance}`)
  })

/** A 404 exactly as an unknown customer's wallet answers it. */
const expectHidden = (response: { status: number; body: any }, param = "customerId") => {
  expect(response.status).toBe(404)
  expect(response.body).toMatchObject({ error: { code: "not_found", param } })
}

describe("public customer links", () => {
  layer(testAppLayer(), { timeout: 300_000, excludeTestServices: true })("over HTTP", (it) => {
    it.effect("opens the wallet with the customer's token only: none, a wrong one or another's is 404 like an unknown id", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key, { name: "Sokha Chan" })
        const other = yield* newCustomer(app, merchant.key)
        expect(customer.wallet_url).toMatch(new RegExp(`^${publicOrigin(app)}/wallet/${customer.id}\\?t=[A-Za-z0-9_-]{32}$`))
        // At least 128 bits: 32 base64url characters carry 192.
        expect(tokenOf(customer.wallet_url)).not.toBe(tokenOf(other.wallet_url))

        const unknown = yield* call(app, "GET", "/wallet/cus_doesnotexist000000000000")
        expectHidden(unknown)
        const bare = yield* call(app, "GET", `/wallet/${customer.id}`)
        expectHidden(bare)
        expect(bare.body.error.message).toBe(`No such customer: ${customer.id}`)
        expectHidden(yield* call(app, "GET", `/wallet/${customer.id}?t=`))
        expectHidden(yield* call(app, "GET", `/wallet/${customer.id}?t=${tokenOf(other.wallet_url)}`))
        const flipped = tokenOf(customer.wallet_url).replace(/^./, (c) => (c === "A" ? "B" : "A"))
        expectHidden(yield* call(app, "GET", `/wallet/${customer.id}?t=${flipped}`))
        const page = yield* Effect.promise(() => app.fetch(`/wallet/${customer.id}?t=${flipped}`, { headers: BROWSER }))
        expect(page.status).toBe(404)

        const opened = yield* call(app, "GET", pathOf(customer.wallet_url))
        expect(opened.status).toBe(200)
        expect(opened.body).toMatchObject({ object: "wallet", customer: { name: "S**** C***" } })
        const html = yield* Effect.promise(() => app.fetch(pathOf(customer.wallet_url), { headers: BROWSER }))
        expect(html.status).toBe(200)
        expect(html.headers.get("referrer-policy")).toBe("no-referrer")

        // The same link every time the customer is read, and in lists.
        const api = yield* clientAs(app, merchant.key)
        expect((yield* api.customers.retrieve({ path: { id: customer.id } })).wallet_url).toBe(customer.wallet_url)
      }))

    it.effect("revokes a customer's links (API key or console): the old link stops working, the new one opens", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const stranger = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const api = yield* clientAs(app, merchant.key)
        const revoked = yield* api.customers.revokePublicLinks({ path: { id: customer.id } })
        expect(revoked).toMatchObject({ id: customer.id, object: "customer" })
        expect(revoked.wallet_url).not.toBe(customer.wallet_url)
        expectHidden(yield* call(app, "GET", pathOf(customer.wallet_url)))
        expect((yield* call(app, "GET", pathOf(revoked.wallet_url))).status).toBe(200)
        expect((yield* api.customers.retrieve({ path: { id: customer.id } })).wallet_url).toBe(revoked.wallet_url)

        // The console does the same for Owner and Admin; another store's key or user finds no such customer.
        const owner = yield* clientAs(app, merchant.owner.token)
        const again = yield* owner.customerConsole.revokePublicLinks({ path: { id: customer.id } })
        expectHidden(yield* call(app, "GET", pathOf(revoked.wallet_url)))
        expect((yield* call(app, "GET", pathOf(again.wallet_url))).status).toBe(200)
        yield* expectFailure(
          Effect.flatMap(clientAs(app, stranger.key), (foreign) => foreign.customers.revokePublicLinks({ path: { id: customer.id } })),
          "NotFound"
        )
        yield* expectFailure(
          Effect.flatMap(clientAs(app, stranger.owner.token), (foreign) =>
            foreign.customerConsole.revokePublicLinks({ path: { id: customer.id } })),
          "NotFound"
        )
        expect((yield* call(app, "GET", pathOf(again.wallet_url))).status).toBe(200)
      }))

    it.effect("replays a customer's create with its current link, not a revoked one", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const body = { email: freshEmail() }
        const headers = { "idempotency-key": `create-${serial}` }
        const created = yield* call(app, "POST", "/v1/customers", { token: merchant.key, body, headers })
        const revoked = yield* call(app, "POST", `/v1/customers/${created.body.id}/public-links/revoke`, { token: merchant.key })
        expect(revoked.status).toBe(200)
        const replay = yield* call(app, "POST", "/v1/customers", { token: merchant.key, body, headers })
        expect(replay.body.wallet_url).toBe(revoked.body.wallet_url)
      }))

    it.effect("erasure revokes the customer's links: wallet, hosted play and cards", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key, { name: "Dara Kim" })
        const scratch = yield* createGame(app, merchant, { name: "Scratch", type: "scratch", prizes: [{ name: "Nothing", kind: "nothing", weight: 1 }] })
        const card = yield* issueCard(app, merchant, scratch.id, customer.id)
        expect((yield* call(app, "GET", pathOf(card.body.card_url))).status).toBe(200)
        // A customer who has a preference, so the erasure has consent to withdraw.
        const owner = yield* clientAs(app, merchant.owner.token)
        yield* owner.customerConsole.setPreferences({ path: { id: customer.id }, payload: { email: true } })

        const erased = yield* owner.customerConsole.erase({ path: { id: customer.id } })
        expect(erased.erased_at).not.toBeNull()
        expect(erased.wallet_url).not.toBe(customer.wallet_url)
        expectHidden(yield* call(app, "GET", pathOf(customer.wallet_url)))
        expectHidden(yield* call(app, "GET", pathOf(card.body.card_url)), "playId")
        expect((yield* call(app, "GET", pathOf(erased.wallet_url))).body).toMatchObject({ object: "wallet", customer: { name: null }, games: [] })
      }))

    it.effect("a card's token opens that card only: not the wallet, not another card; its reveal needs it too", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const game = yield* createGame(app, merchant, {
          name: "Scratch & win",
          type: "scratch",
          prizes: [{ name: "Free cake", kind: "voucher", weight: 1 }]
        })
        const first = (yield* issueCard(app, merchant, game.id, customer.id)).body
        const second = (yield* issueCard(app, merchant, game.id, customer.id)).body
        expect(first).toMatchObject({ object: "play", customer_id: customer.id, status: "issued" })
        expect(first.card_url).toMatch(new RegExp(`^${publicOrigin(app)}/play/${first.id}\\?t=[A-Za-z0-9_-]{32}$`))
        const cardToken = tokenOf(first.card_url)

        expectHidden(yield* call(app, "GET", `/play/${first.id}`), "playId")
        expectHidden(yield* call(app, "GET", `/play/${first.id}?t=${tokenOf(second.card_url)}`), "playId")
        expectHidden(yield* call(app, "GET", `/play/${first.id}?t=${tokenOf(customer.wallet_url)}`), "playId")
        expectHidden(yield* call(app, "GET", `/wallet/${customer.id}?t=${cardToken}`))
        expectHidden(yield* call(app, "POST", `/play/${first.id}/reveal`), "playId")
        expectHidden(yield* call(app, "POST", `/play/${first.id}/reveal?t=${tokenOf(second.card_url)}`), "playId")
        expectHidden(yield* call(app, "POST", `/play/game/${game.id}/play?c=${customer.id}&t=${cardToken}`), "c")

        const card = yield* call(app, "GET", pathOf(first.card_url))
        expect(card.status).toBe(200)
        expect(card.body).toMatchObject({ object: "hosted_play", id: first.id, status: "issued" })
        expect(card.body.customer_id).toBeUndefined()
        expect(JSON.stringify(card.body)).not.toContain(customer.id)

        const revealed = yield* call(app, "POST", `/play/${first.id}/reveal?t=${cardToken}`)
        expect(revealed.status).toBe(201)
        expect(revealed.body).toMatchObject({ object: "hosted_play", status: "revealed", prize: { kind: "voucher" } })
        expect(revealed.body.voucher_code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/)
        expect(JSON.stringify(revealed.body)).not.toContain(customer.id)
        // The voucher shows through the card's token, and nowhere without it.
        expect((yield* call(app, "GET", pathOf(first.card_url))).body.voucher_code).toBe(revealed.body.voucher_code)
        const bare = yield* call(app, "GET", `/play/${first.id}`)
        expect(JSON.stringify(bare.body)).not.toContain(revealed.body.voucher_code)
        const otherCard = yield* call(app, "GET", pathOf(second.card_url))
        expect(JSON.stringify(otherCard.body)).not.toContain(revealed.body.voucher_code)

        // The merchant's plays carry the card link too.
        const plays = yield* call(app, "GET", `/v1/customers/${customer.id}/plays`, { token: merchant.key })
        expect(plays.body.data.map((play: { card_url: string }) => play.card_url).sort()).toEqual([first.card_url, second.card_url].sort())
      }))

    it.effect("hosted play needs the customer's token; the game page offers play only to a valid pair and links to the wallet", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const other = yield* newCustomer(app, merchant.key)
        const game = yield* createGame(app, merchant, { name: "Wheel", type: "spin", prizes: [{ name: "Voucher", kind: "voucher", weight: 1 }] })
        const token = tokenOf(customer.wallet_url)
        const play = (query: string) => call(app, "POST", `/play/game/${game.id}/play${query}`)

        expectHidden(yield* play(`?c=${customer.id}`), "c")
        expectHidden(yield* play(`?c=${customer.id}&t=${tokenOf(other.wallet_url)}`), "c")
        expectHidden(yield* play(`?c=${other.id}&t=${token}`), "c")
        expectHidden(yield* play(`?c=cus_doesnotexist000000000000&t=${token}`), "c")
        const stats = yield* Effect.flatMap(clientAs(app, merchant.owner.token), (api) => api.gamesConsole.stats({ path: { gameId: game.id } }))
        expect(stats.plays).toBe(0)

        const played = yield* play(`?c=${customer.id}&t=${token}`)
        expect(played.status).toBe(201)
        expect(played.body).toMatchObject({ object: "hosted_play", status: "played", game: { name: "Wheel" } })
        expect(played.body.customer_id).toBeUndefined()
        expect(played.body.voucher_code).toBeDefined()
        expect((yield* call(app, "GET", pathOf(played.body.card_url))).body.voucher_code).toBe(played.body.voucher_code)
        // Another customer's wallet never shows it.
        expect(JSON.stringify((yield* call(app, "GET", pathOf(other.wallet_url))).body)).not.toContain(played.body.voucher_code)

        // Revoked: the old token plays no more.
        const revoked = yield* Effect.flatMap(clientAs(app, merchant.key), (api) => api.customers.revokePublicLinks({ path: { id: customer.id } }))
        expectHidden(yield* play(`?c=${customer.id}&t=${token}`), "c")
        expectHidden(yield* call(app, "GET", pathOf(played.body.card_url)), "playId")
        expect((yield* play(`?c=${customer.id}&t=${tokenOf(revoked.wallet_url)}`)).status).toBe(201)

        // The game page: a player only with a pair that goes together.
        const bare = yield* call(app, "GET", `/play/game/${game.id}`)
        expect(bare.body).toMatchObject({ object: "hosted_game", player: null })
        expect((yield* call(app, "GET", `/play/game/${game.id}?c=${customer.id}&t=${token}`)).body.player).toBeNull()
        expect((yield* call(app, "GET", `/play/game/${game.id}?c=${other.id}&t=${tokenOf(revoked.wallet_url)}`)).body.player).toBeNull()

        // The wallet links to the game with the customer's credentials, and the game page back to the wallet.
        const wallet = (yield* call(app, "GET", pathOf(revoked.wallet_url))).body
        expect(wallet.games).toEqual([{ id: game.id, name: "Wheel", type: "spin", play_url: expect.any(String) }])
        const gameLink = wallet.games[0].play_url as string
        expect(gameLink).toBe(`${publicOrigin(app)}/play/game/${game.id}?c=${customer.id}&t=${tokenOf(revoked.wallet_url)}`)
        const hosted = (yield* call(app, "GET", pathOf(gameLink))).body
        expect(hosted.player).toEqual({
          play_url: `${publicOrigin(app)}/play/game/${game.id}/play?c=${customer.id}&t=${tokenOf(revoked.wallet_url)}`,
          wallet_url: revoked.wallet_url
        })
        const withButton = yield* Effect.promise(() => app.fetch(pathOf(gameLink), { headers: BROWSER }).then((r) => r.text()))
        expect(withButton).toContain(`id="play"`)
        expect(withButton).toContain(`href="${pathOf(revoked.wallet_url)}"`)
        const withoutButton = yield* Effect.promise(() =>
          app.fetch(`/play/game/${game.id}?c=${customer.id}&t=${token}`, { headers: BROWSER }).then((r) => r.text()))
        expect(withoutButton).not.toContain(`id="play"`)
        expect(withoutButton).not.toContain("/wallet/")
      }))

    it.effect("the public wallet shows no other customer's id, payment id or merchant's note; its own vouchers only", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const owner = yield* clientAs(app, merchant.owner.token)
        const api = yield* clientAs(app, merchant.key)
        yield* owner.loyaltyConsole.configure({ path: { storeId: merchant.storeId }, payload: { active: true, points_per_unit: { USD: "10" } } })
        yield* owner.referralsConsole.configure({
          path: { storeId: merchant.storeId },
          payload: { active: true, referrer_points: 500, referee_points: 200 }
        })
        const referrer = yield* newCustomer(app, merchant.key, { name: "Sokha Chan" })
        const code = yield* api.referrals.code({ path: { id: referrer.id } })
        const referee = yield* newCustomer(app, merchant.key, { referral_code: code.code })
        const refereePayment = yield* paidPayment(app, merchant.key, { customer_id: referee.id, amount: "3.00" })
        const ownPayment = yield* paidPayment(app, merchant.key, { customer_id: referrer.id, amount: "2.00" })
        // 500 for the referral, 20 earned on its own payment.
        yield* balanceBecomes(app, merchant.key, referrer.id, 520)
        const note = "Refund for order 7 disputed by Mr. Chan"
        yield* owner.loyaltyConsole.adjust({ path: { id: referrer.id }, payload: { points: 100, reason: note } })
        const reward = yield* owner.loyaltyConsole.createReward({ path: { storeId: merchant.storeId }, payload: { name: "Free coffee", points_cost: 50 } })
        const redemption = yield* api.loyalty.redeemReward({ payload: { customer_id: referrer.id, reward_id: reward.id }, headers: {} })
        const refereeRedemption = yield* api.loyalty.redeemPoints({ payload: { customer_id: referee.id, points: 10 }, headers: {} })

        // The merchant's ledger keeps what it recorded.
        const ledger = yield* owner.loyaltyConsole.customerLoyalty({ path: { id: referrer.id }, urlParams: { limit: 10 } })
        expect(ledger.entries.data.some((entry) => entry.reason?.includes(referee.id))).toBe(true)
        expect(ledger.entries.data.some((entry) => entry.payment_id === ownPayment.id)).toBe(true)

        const wallet = yield* call(app, "GET", pathOf(referrer.wallet_url))
        expect(wallet.status).toBe(200)
        const text = JSON.stringify(wallet.body)
        for (const secret of [referee.id, referrer.id, ownPayment.id, refereePayment.id, note, "lpe_", refereeRedemption.voucher_code]) {
          expect(text).not.toContain(secret)
        }
        expect(wallet.body.recent_entries.map((entry: { type: string; label: string }) => [entry.type, entry.label])).toEqual([
          ["redeem", "Redeemed"],
          ["adjust", "Adjusted by the store"],
          expect.anything(),
          expect.anything()
        ])
        expect(wallet.body.recent_entries.map((entry: object) => Object.keys(entry).sort())).toEqual(
          wallet.body.recent_entries.map(() => ["created_at", "label", "points", "type"])
        )
        expect(wallet.body.recent_entries.map((entry: { type: string }) => entry.type).sort()).toEqual(["adjust", "earn", "redeem", "referral"])
        // Its own voucher, and its referral page.
        expect(wallet.body.vouchers).toEqual([{ code: redemption.voucher_code, label: "Free coffee", created_at: expect.any(String) }])
        expect(wallet.body.referral).toEqual({ code: code.code, share_url: `${publicOrigin(app)}/r/${code.code}` })

        const html = yield* Effect.promise(() => app.fetch(pathOf(referrer.wallet_url), { headers: BROWSER }).then((r) => r.text()))
        for (const secret of [referee.id, ownPayment.id, refereePayment.id, "Refund for order 7"]) expect(html).not.toContain(secret)
        expect(html).toContain(redemption.voucher_code)
        expect(html).toContain(`/r/${code.code}`)
        // The referee's wallet shows its own voucher, and nothing of the referrer's.
        const refereeWallet = JSON.stringify((yield* call(app, "GET", pathOf(referee.wallet_url))).body)
        expect(refereeWallet).toContain(refereeRedemption.voucher_code)
        expect(refereeWallet).not.toContain(redemption.voucher_code)
        expect(refereeWallet).not.toContain(referrer.id)
      }))

    it.effect("stores no token: only the link version is kept", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const merchant = yield* newMerchant(app)
        const customer = yield* newCustomer(app, merchant.key)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<Record<string, unknown>>`SELECT * FROM customers WHERE id = ${customer.id}`
        expect(JSON.stringify(row)).not.toContain(tokenOf(customer.wallet_url))
        expect(row!.public_link_version).toBe(0)
      }))
  })
})
