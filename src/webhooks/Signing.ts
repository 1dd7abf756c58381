/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` and the base64 of
 * random bytes; a signature is `v1,` and the base64 HMAC-SHA256, keyed by the decoded bytes, of
 * `{webhook-id}.{webhook-timestamp}.{body}`. Several signatures travel space-separated in one header,
 * which is how a rotation keeps old and new receivers verifying.
 */
import { createHmac, createSecretKey, type KeyObject, randomBytes } from "node:crypto"

const SECRET_PREFIX = "whsec_"
const SECRET_BYTES = 32

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export const newSigningSecret = (): string => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64")

const keyOf = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

/** A secret as an HMAC key, decoded once for the many deliveries it signs. */
export const signingKey = (secret: string): KeyObject => createSecretKey(keyOf(secret))

/** The `v1,<base64>` signature of one delivery under one secret (or its `signingKey`). */
export const sign = (secret: string | KeyObject, id: string, timestamp: number, body: string): string =>
  "v1," +
  createHmac("sha256", typeof secret === "string" ? keyOf(secret) : secret).update(`${id}.${timestamp}.${body}`, "utf8")
    .digest("base64")

/** The Standard Webhooks headers of one delivery attempt, signed by every active secret. */
export const webhookHeaders = (
  secrets: ReadonlyArray<string | KeyObject>,
  id: string,
  timestamp: number,
  body: string
): Record<string, string> => ({
  "content-type": "application/json",
  "webhook-id": id,
  "webhook-timestamp": String(timestamp),
  "webhook-signature": secrets.map((secret) => sign(secret, id, timestamp, body)).join(" ")
})
