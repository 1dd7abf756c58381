/**
 * The console's session cookie and the origin rule for calls that carry it.
 *
 * The session token lives in an `HttpOnly`, `SameSite=Strict` cookie (`Secure` when PUBLIC_BASE_URL is
 * https): the page's script never sees it, so an injected script cannot carry it off, and a page of
 * another site cannot make the browser send it. Calls that carry the cookie must also name the service's
 * own origin in `Origin`, which browsers set on every POST and which no page can forge, so an old browser
 * that ignores SameSite is covered too.
 */
import { Effect, Option } from "effect"
import { AppConfig } from "../platform/Config.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"

export const CONSOLE_SESSION_COOKIE = "console_session"

const COOKIE_TOKEN = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]+$/

/** The session token of a `Cookie` header, if it carries the console's cookie. */
export const sessionTokenOfCookie = (cookieHeader: string | undefined): Option.Option<string> => {
  if (cookieHeader === undefined) return Option.none()
  for (const part of cookieHeader.split(";")) {
    const separator = part.indexOf("=")
    if (separator < 0) continue
    if (part.slice(0, separator).trim() !== CONSOLE_SESSION_COOKIE) continue
    const value = part.slice(separator + 1).trim()
    if (value.length > 0 && COOKIE_TOKEN.test(value)) return Option.some(value)
  }
  return Option.none()
}

/** Whether cookies must be `Secure`: the public URL is https. */
const secureCookies = Effect.map(AppConfig, (config) =>
  Option.exists(config.publicBaseUrl, (url) => url.startsWith("https:")))

/** `Set-Cookie` for a new session, living as long as the session may. */
export const sessionCookie = (token: string, expiresAt: Date) =>
  Effect.map(secureCookies, (secure) => {
    const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000))
    return `${CONSOLE_SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`
  })

/** `Set-Cookie` that removes the session cookie. */
export const clearedSessionCookie = Effect.map(secureCookies, (secure) =>
  `${CONSOLE_SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`)

const originOf = (url: string): Option.Option<string> => {
  try {
    return Option.some(new URL(url).origin)
  } catch {
    return Option.none()
  }
}

/**
 * Whether a request's `Origin` is the service's own: PUBLIC_BASE_URL's origin when it is set; without it,
 * the local origin the service reports (`http://localhost:<port>`) or the origin of the `Host` the browser
 * addressed (a page of another site cannot make the browser send its own origin with our host).
 */
export const isOwnOrigin = (headers: { readonly origin?: string | undefined; readonly host?: string | undefined }) =>
  Effect.gen(function*() {
    const origin = headers.origin
    if (origin === undefined || origin === "null") return false
    const config = yield* AppConfig
    const publicUrl = yield* (yield* PublicBaseUrl).get
    const own = Option.getOrElse(originOf(publicUrl), () => publicUrl)
    if (origin === own) return true
    if (Option.isSome(config.publicBaseUrl) || headers.host === undefined) return false
    return Option.exists(originOf(`http://${headers.host}`), (hostOrigin) => hostOrigin === origin)
  })
