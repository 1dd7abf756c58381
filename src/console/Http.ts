/**
 * The console's web app and its session routes, on the same router as the API:
 *
 * - `GET /console` and every path under it answer the app's HTML (the app routes on the client), never
 *   cached, with a strict Content-Security-Policy (scripts and styles from this origin only, no inline
 *   script), `nosniff` and no framing.
 * - `GET /console/assets/<name>` answers the bundle's files; their names carry a hash of their content,
 *   so they are cached for a year.
 * - `GET /console/checkout-preview` answers the hosted checkout page with the branding in its query (the
 *   console's branding form, before it is saved) and a sample payment; only the console may frame it.
 * - `POST /console/session` signs in (the fields of `POST /auth/login`, the MFA code included) and
 *   `POST /console/register` registers a new organization; both set the session cookie. `DELETE
 *   /console/session` signs out and clears it. These are the only routes that handle the cookie itself,
 *   since a response header is the one place an HttpOnly cookie can be set; everything else the console
 *   does goes through the console RPC.
 * - The steps of the mailed links that a reader not signed in takes (domain/console/Account.ts):
 *   `POST /console/invitation` shows an invitation, `POST /console/invitation/sign-up` creates the
 *   invitee's account from it and signs them in (the cookie again), `POST /console/email-change` confirms
 *   a new e-mail address. Each takes the link's token and shares the public pages' per-address limit.
 */
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, ParseResult, Schema } from "effect"
import QRCode from "qrcode"
import { CheckoutMerchant, CheckoutQr, CheckoutView } from "../../domain/Checkout.ts"
import type { PaymentId } from "../../domain/Ids.ts"
import { checkoutPreviewPage } from "../checkout/Page.tsx"
import { renderHostedPage } from "../platform/pages/Document.tsx"
import { PaymentsService } from "../payments/Service.ts"
import { StoresService } from "../stores/Service.ts"
import { withConsoleContext } from "./Context.ts"
import { existsSync, readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { SessionGrant } from "../../domain/Accounts.ts"
import {
  CONSOLE_CHECKOUT_PREVIEW_PATH,
  CONSOLE_PASSWORD_RESET_PATH,
  CONSOLE_PATH,
  CONSOLE_REGISTER_PATH,
  CONSOLE_SESSION_PATH,
  ConsoleForgotPassword,
  ConsoleRegister,
  ConsoleSignedIn,
  ConsoleSignIn
} from "../../domain/Console.ts"
import { type ApiError, describeIssues, errorStatus, Forbidden, InvalidRequest, toErrorEnvelope } from "../../domain/Errors.ts"
import {
  CONSOLE_EMAIL_CHANGE_PATH,
  CONSOLE_INVITATION_PATH,
  CONSOLE_INVITATION_SIGN_UP_PATH,
  EmailChangeToken,
  InvitationSignUp,
  InvitationToken
} from "../../domain/console/Account.ts"
import { AccountsService } from "../accounts/Service.ts"
import { RateLimiter } from "../platform/RateLimit.ts"
import { AppConfig } from "../platform/Config.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"
import { clearedSessionCookie, isOwnOrigin, sessionCookie, sessionTokenOfCookie } from "./Session.ts"

/** The project's root: the nearest folder above this module with a package.json (source or bundle alike). */
const projectRoot = (): string => {
  let directory = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(directory, "package.json"))) {
    const parent = dirname(directory)
    if (parent === directory) return process.cwd()
    directory = parent
  }
  return directory
}

/** Where scripts/build.mjs writes the console: index.html and assets/. */
export const consoleDistDirectory = (): string => join(projectRoot(), "dist", "console")

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  // The checkout preview of the branding page (CONSOLE_CHECKOUT_PREVIEW_PATH) is the one frame.
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const pageHeaders = {
  "cache-control": "no-store",
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin"
}

const ASSET_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8"
}

const ASSET_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.([a-z0-9]+)$/

const notBuilt = HttpServerResponse.text(
  "The console is not built yet: run `npm run build` (npm install and npm start do it).",
  { status: 503, headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" } }
)

const respondError = (error: ApiError, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(toErrorEnvelope(error), {
    status: errorStatus(error),
    headers: {
      "cache-control": "no-store",
      ...headers,
      ...(error._tag === "RateLimited" ? { "retry-after": String(error.retryAfterSeconds) } : {})
    }
  })

/** A form's JSON body, decoded by its schema; a field that is wrong is named in `param`. */
const formBody = <A, I>(schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const json = yield* Effect.orElseFail(request.json, () => new InvalidRequest({ message: "The request body must be a JSON object" }))
    return yield* Schema.decodeUnknown(schema, { onExcessProperty: "error", errors: "all" })(json).pipe(
      Effect.mapError((error) => {
        const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
        const { message, param } = describeIssues(issues, "The form is not valid")
        return new InvalidRequest(param === undefined ? { message } : { message, param })
      })
    )
  })

const requireOwnOrigin = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (!(yield* isOwnOrigin({ origin: request.headers["origin"], host: request.headers["host"] }))) {
    return yield* new Forbidden({ message: "The console's session routes answer the console's own origin only" })
  }
})

/** A sample KHQR for the preview: a code of no payment, drawn as the checkout draws one. */
let previewQr: Promise<string> | undefined
const PREVIEW_QR = Effect.promise(() =>
  previewQr ??= QRCode.toDataURL("KHQR checkout preview", { errorCorrectionLevel: "M", margin: 2, width: 320 })
)

/**
 * The hosted checkout page with the branding of the query: nothing is read or stored, and what the query
 * says is escaped and checked by the page itself (colors, https logos), as it does with saved branding.
 */
const checkoutPreview = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const query = new URL(request.url, "http://console.invalid").searchParams
  const text = (name: string) => {
    const value = query.get(name)?.trim()
    return value === undefined || value === "" ? null : value.slice(0, 200)
  }
  const now = new Date()
  const png = yield* PREVIEW_QR
  return yield* renderHostedPage(checkoutPreviewPage(
    new CheckoutView({
      id: "pay_preview" as PaymentId,
      object: "checkout",
      status: "pending",
      amount: "12.50",
      currency: "USD",
      amount_refunded: "0.00",
      description: "Order #1024 (preview)",
      reference_id: null,
      livemode: true,
      expires_at: new Date(now.getTime() + 15 * 60_000).toISOString(),
      paid_at: null,
      merchant: new CheckoutMerchant({
        name: text("display_name") ?? text("name") ?? "Your store",
        logo_url: text("logo_url"),
        primary_color: text("primary_color"),
        accent_color: text("accent_color")
      }),
      qr: new CheckoutQr({ payload: "", md5: "", png_data_url: png, svg: "" }),
      events_url: "",
      receipt_url: null,
      created_at: now.toISOString()
    })
  ), { frameAncestors: "'self'" })
})

export const ConsoleWebLive = Layer.unwrapEffect(Effect.gen(function*() {
  const accounts = yield* AccountsService
  const limiter = yield* RateLimiter
  const config = yield* AppConfig
  const context = yield* Effect.context<AppConfig | PublicBaseUrl>()
  const services = yield* Effect.context<AccountsService | StoresService | PaymentsService>()
  const idleTimeoutSeconds = config.consoleIdleMinutes * 60
  const distDirectory = consoleDistDirectory()
  let html: string | undefined

  // The page as built, with the signed-in user's context when the request carries a session, and the payments
  // list's first page when it opens the list (Context.ts).
  const page = Effect.gen(function*() {
    if (html === undefined) {
      const file = join(distDirectory, "index.html")
      if (!existsSync(file)) return notBuilt
      html = readFileSync(file, "utf8")
    }
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = new URL(request.url, "http://console.invalid").pathname
    const body = yield* withConsoleContext(html, sessionTokenOfCookie(request.headers["cookie"]), path)
    return HttpServerResponse.text(body, { contentType: "text/html; charset=utf-8", headers: pageHeaders })
  }).pipe(Effect.provide(services))

  const asset = (name: string) =>
    Effect.gen(function*() {
      const type = ASSET_NAME.exec(name)?.[1]
      const contentType = type === undefined ? undefined : ASSET_TYPES[type]
      if (contentType === undefined) return HttpServerResponse.text("Not found", { status: 404 })
      const body = yield* Effect.promise(() => readFile(join(distDirectory, "assets", name)).catch(() => undefined))
      if (body === undefined) return HttpServerResponse.text("Not found", { status: 404, headers: { "cache-control": "no-store" } })
      return HttpServerResponse.uint8Array(body, {
        contentType,
        headers: { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }
      })
    })

  const signedIn = (grant: SessionGrant) =>
    Effect.gen(function*() {
      const cookie = yield* sessionCookie(grant.access_token, new Date(grant.expires_at))
      return HttpServerResponse.unsafeJson(
        new ConsoleSignedIn({ object: "console_session", user: grant.user, expires_at: grant.expires_at }),
        { headers: { "set-cookie": cookie, "cache-control": "no-store" } }
      )
    })

  const answer = <E extends ApiError, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    effect.pipe(Effect.catchAll((error) => Effect.succeed(respondError(error))), Effect.provide(context))

  const signIn = answer(Effect.gen(function*() {
    yield* requireOwnOrigin
    const form = yield* formBody(ConsoleSignIn)
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* signedIn(yield* accounts.login(form, request.remoteAddress, { idleTimeoutSeconds }))
  }))

  const register = answer(Effect.gen(function*() {
    yield* requireOwnOrigin
    const form = yield* formBody(ConsoleRegister)
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* signedIn(yield* accounts.register(form, request.remoteAddress, { idleTimeoutSeconds }))
  }))

  /** "Forgot your password": the rules and limits of `POST /auth/forgot-password`, from the console's own origin. */
  const requestPasswordReset = answer(Effect.gen(function*() {
    yield* requireOwnOrigin
    const form = yield* formBody(ConsoleForgotPassword)
    const request = yield* HttpServerRequest.HttpServerRequest
    return HttpServerResponse.unsafeJson(yield* accounts.forgotPassword(form, request.remoteAddress), {
      status: 202,
      headers: { "cache-control": "no-store" }
    })
  }))

  const signOut = answer(Effect.gen(function*() {
    yield* requireOwnOrigin
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = sessionTokenOfCookie(request.headers["cookie"])
    if (Option.isSome(token)) yield* accounts.signOut(token.value)
    return HttpServerResponse.empty({ status: 204, headers: { "set-cookie": yield* clearedSessionCookie } })
  }))

  /** A form that carries a mailed token: the console's own origin, and the public pages' per-address limit. */
  const tokenForm = <A, I>(schema: Schema.Schema<A, I>) =>
    Effect.zipRight(Effect.zipRight(requireOwnOrigin, limiter.admitPageView), formBody(schema))

  const previewInvitation = answer(Effect.gen(function*() {
    const form = yield* tokenForm(InvitationToken)
    return HttpServerResponse.unsafeJson(yield* accounts.previewInvitation(form), { headers: { "cache-control": "no-store" } })
  }))

  const signUpFromInvitation = answer(Effect.gen(function*() {
    const form = yield* tokenForm(InvitationSignUp)
    return yield* signedIn(yield* accounts.signUpFromInvitation(form, { idleTimeoutSeconds }))
  }))

  const confirmEmailChange = answer(Effect.gen(function*() {
    const form = yield* tokenForm(EmailChangeToken)
    return HttpServerResponse.unsafeJson(yield* accounts.confirmEmailChange(form), { headers: { "cache-control": "no-store" } })
  }))

  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", CONSOLE_PATH, page),
    HttpLayerRouter.route("GET", CONSOLE_CHECKOUT_PREVIEW_PATH, checkoutPreview),
    HttpLayerRouter.route("GET", `${CONSOLE_PATH}/*`, (request) => {
      const path = request.url.split("?")[0] ?? request.url
      const prefix = `${CONSOLE_PATH}/assets/`
      return path.startsWith(prefix) ? asset(path.slice(prefix.length)) : page
    }),
    HttpLayerRouter.route("POST", CONSOLE_SESSION_PATH, signIn),
    HttpLayerRouter.route("DELETE", CONSOLE_SESSION_PATH, signOut),
    HttpLayerRouter.route("POST", CONSOLE_REGISTER_PATH, register),
    HttpLayerRouter.route("POST", CONSOLE_PASSWORD_RESET_PATH, requestPasswordReset),
    HttpLayerRouter.route("POST", CONSOLE_INVITATION_PATH, previewInvitation),
    HttpLayerRouter.route("POST", CONSOLE_INVITATION_SIGN_UP_PATH, signUpFromInvitation),
    HttpLayerRouter.route("POST", CONSOLE_EMAIL_CHANGE_PATH, confirmEmailChange)
  ])
}))
