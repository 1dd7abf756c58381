/**
 * The API version: the date of the last change to the wire contract (Stripe-style dated versions).
 * It is `info.version` of the OpenAPI document and the `api-version` header of every response; each
 * new version gets an entry in CHANGELOG.md saying what changed.
 */
export const API_VERSION = "2026-11-26"

/** The response header that carries API_VERSION. */
export const API_VERSION_HEADER = "api-version"
