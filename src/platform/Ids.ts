/**
 * Object ids: a type prefix, `_`, and 24 random base62 characters (about 143 bits), e.g.
 * `pay_3kTMd92JxQeLp0aZ7yNcB1vW`. The prefix tells a reader (and a support engineer) what an id
 * points at; the random part guesses nothing about other objects, not even their creation order.
 */
import { Schema } from "effect"
import { randomBase62 } from "./Crypto.ts"

export const IdPrefixes = [
  "pay", // payment
  "re", // refund
  "cus", // customer
  "org", // organization
  "str", // store
  "br", // branch
  "key", // API key
  "we", // webhook endpoint
  "evt", // event
  "whd", // webhook delivery
  "usr", // user
  "lnk", // payment link
  "inv", // invoice
  "jrn", // ledger journal
  "sess", // session
  "kyc" // merchant verification (KYC) submission
] as const

export type IdPrefix = (typeof IdPrefixes)[number]

/** An id of the given kind, as far as the type system can tell. */
export type PrefixedId<P extends IdPrefix> = `${P}_${string}`

const RANDOM_PART_LENGTH = 24

// A fixed, well-formed sample for documentation, so the OpenAPI document does not change between builds.
const SAMPLE_RANDOM_PART = "3kTMd92JxQeLp0aZ7yNcB1vW"

const idPattern = (prefix: IdPrefix): RegExp => new RegExp(`^${prefix}_[0-9A-Za-z]{${RANDOM_PART_LENGTH}}$`)

/** A new random id of the given kind. */
export const newId = <P extends IdPrefix>(prefix: P): PrefixedId<P> => `${prefix}_${randomBase62(RANDOM_PART_LENGTH)}`

/** Whether `value` is a well-formed id of the given kind (it says nothing about whether it exists). */
export const isIdOf = <P extends IdPrefix>(prefix: P, value: unknown): value is PrefixedId<P> =>
  typeof value === "string" && idPattern(prefix).test(value)

/** The schema of an id of the given kind, for payloads, paths and the OpenAPI document. */
export const IdOf = <P extends IdPrefix>(prefix: P): Schema.Schema<string> => {
  const example = `${prefix}_${SAMPLE_RANDOM_PART}`
  return Schema.String.pipe(
    Schema.pattern(idPattern(prefix), {
      message: () => `must be an id starting with "${prefix}_" followed by ${RANDOM_PART_LENGTH} letters or digits`
    })
  ).annotations({
    description: `An opaque id: "${prefix}_" followed by ${RANDOM_PART_LENGTH} letters and digits.`,
    examples: [example]
  })
}
