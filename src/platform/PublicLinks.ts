/**
 * Credentials of the public customer links (API.md "Hosted pages").
 *
 * A customer id or a play id travels in webhooks, merchant systems and logs, so it opens nothing by
 * itself: a public link carries `t`, a token of 192 bits that is HMAC-SHA256, under a key derived from
 * the master key, of the link's purpose, its subject (the customer or the play) and the customer's link
 * version. Nothing is stored but the version: the same link can always be handed out again, and raising
 * the version (the merchant revokes the customer's links, or erases the customer) turns every token made
 * before into a wrong one.
 *
 * - `customer`: the wallet (`/wallet/{customerId}?t=…`) and hosted play (`/play/game/{gameId}?c=…&t=…`).
 * - `card`: one play (`/play/{playId}?t=…`), keyed by the play, so it opens that card and nothing else.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"
import { MasterKey } from "./Crypto.ts"
import { PublicBaseUrl } from "./PublicUrl.ts"

export type LinkPurpose = "customer" | "card"

/** 24 bytes of the HMAC: 192 bits, 32 base64url characters. */
const TOKEN_BYTES = 24

/** Separates the key of public links from every other use of the master key. */
const LINK_KEY_LABEL = "public-links/v1"

/** The key of public links, derived from the master key (an HMAC of a fixed label, as HKDF's expand step). */
export const linkKeyOf = (masterKey: Uint8Array): Buffer => createHmac("sha256", masterKey).update(LINK_KEY_LABEL).digest()

/** The token of `purpose` for `subject` at the customer's link `version`. */
export const linkToken = (linkKey: Uint8Array, purpose: LinkPurpose, subject: string, version: number): string =>
  createHmac("sha256", linkKey)
    .update(`${purpose}\n${subject}\n${version}`)
    .digest()
    .subarray(0, TOKEN_BYTES)
    .toString("base64url")

/** Whether `given` is `expected`, compared in constant time; a missing or oddly sized token is simply wrong. */
export const sameToken = (expected: string, given: string | undefined): boolean => {
  if (given === undefined) return false
  const a = Buffer.from(expected, "utf8")
  const b = Buffer.from(given, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The public URLs of customer links, for one base URL (as the views that hand them out need). */
export interface LinkUrls {
  /** `{base}/wallet/{customerId}?t=…` */
  readonly wallet: (customerId: string, version: number) => string
  /** `{base}/play/{playId}?t=…` */
  readonly card: (playId: string, version: number) => string
  /** `{base}/play/game/{gameId}?c={customerId}&t=…`: the game page with the customer's play button. */
  readonly game: (gameId: string, customerId: string, version: number) => string
  /** `{base}/play/game/{gameId}/play?c={customerId}&t=…`: where that button posts. */
  readonly instantPlay: (gameId: string, customerId: string, version: number) => string
}

export class PublicLinks extends Effect.Service<PublicLinks>()("platform/PublicLinks", {
  effect: Effect.gen(function*() {
    const { key } = yield* MasterKey
    const publicUrl = yield* PublicBaseUrl
    const linkKey = linkKeyOf(key)

    const customerToken = (customerId: string, version: number) => linkToken(linkKey, "customer", customerId, version)
    const cardToken = (playId: string, version: number) => linkToken(linkKey, "card", playId, version)

    const playerQuery = (customerId: string, version: number) =>
      `c=${encodeURIComponent(customerId)}&t=${customerToken(customerId, version)}`

    const urlsFor = (base: string): LinkUrls => ({
      wallet: (customerId, version) =>
        `${base}/wallet/${encodeURIComponent(customerId)}?t=${customerToken(customerId, version)}`,
      card: (playId, version) => `${base}/play/${encodeURIComponent(playId)}?t=${cardToken(playId, version)}`,
      game: (gameId, customerId, version) =>
        `${base}/play/game/${encodeURIComponent(gameId)}?${playerQuery(customerId, version)}`,
      instantPlay: (gameId, customerId, version) =>
        `${base}/play/game/${encodeURIComponent(gameId)}/play?${playerQuery(customerId, version)}`
    })

    return {
      /** Whether `given` opens the customer's wallet and hosted play at its link `version`. */
      opensCustomer: (customerId: string, version: number, given: string | undefined) =>
        sameToken(customerToken(customerId, version), given),
      /** Whether `given` opens the card `playId` of a customer at link `version`. */
      opensCard: (playId: string, version: number, given: string | undefined) =>
        sameToken(cardToken(playId, version), given),
      /** The link URLs under the current public base URL. */
      urls: Effect.map(publicUrl.get, urlsFor)
    } as const
  })
}) {}
