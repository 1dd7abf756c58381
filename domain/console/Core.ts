/**
 * The console's core: its paths, its session, the context every page starts from and the payments area
 * (the list and its live feed, a payment's detail, refunds, test payments, the home figures). The web app
 * loads this group with its shell, so the first screen needs no other; every other group
 * (domain/ConsoleRpcs.ts) loads with the first page that calls one of its procedures. Console.ts re-exports
 * all of it, and its ConsoleCoreRpcs includes this group.
 */
import { Rpc, RpcGroup, RpcMiddleware } from "@effect/rpc"
import { Schema } from "effect"
import { MatrixRow } from "../Access.ts"
import { Email, LoginDto, Me, RegisterDto, User } from "../Accounts.ts"
import { Timeseries } from "../Analytics.ts"
import { CurrentPrincipal } from "../Auth.ts"
import {
  Forbidden,
  IdempotencyConflict,
  InvalidRequest,
  InvalidState,
  MfaRequired,
  NotFound,
  RateLimited,
  ServiceUnavailable,
  Unauthorized
} from "../Errors.ts"
import { OrganizationId, PaymentId, StoreId } from "../Ids.ts"
import { DEFAULT_LIST_LIMIT, ListParams, MAX_LIST_LIMIT } from "../Lists.ts"
import { Currency } from "../Money.ts"
import {
  CreatePayment,
  CreateRefund,
  IdempotencyHeaders,
  Payment,
  PaymentList,
  PaymentListParams,
  PaymentStatus,
  Refund,
  RefundList,
  SimulateStatus
} from "../Payments.ts"

/** Where the service answers the console RPC. */
export const CONSOLE_RPC_PATH = "/rpc"

/** Where the console's web app is served; every path under it answers the app's HTML (client routes). */
export const CONSOLE_PATH = "/console"
/**
 * The name of the meta element in which the console's page carries the signed-in user's `ConsoleContext`
 * (its JSON encoding, URI-encoded: nothing in it can end an attribute), so the first screen starts with it
 * instead of calling `Context`. The build writes it empty (scripts/build.mjs).
 */
export const CONSOLE_CONTEXT_META = "console-context"
/**
 * The performance mark (`performance.mark`) the console's page makes once it has fetched, while idle, the
 * code of every page and procedure group: from then on opening any page fetches no script.
 */
export const CONSOLE_EVERY_PAGE_LOADED_MARK = "console:every-page-loaded"
/** Where the console lists a store's payments: the page a merchant opens most. */
export const CONSOLE_PAYMENTS_PATH = "/console/payments"
/** How many payments one page of the console's list holds. */
export const CONSOLE_PAYMENTS_PAGE_SIZE = 20
/**
 * The name of the meta element in which `GET CONSOLE_PAYMENTS_PATH` with a session carries the list's first
 * page (`CarriedPayments`, encoded as CONSOLE_CONTEXT_META's content is), so the first screen draws its rows
 * without waiting for a call. The build writes it empty.
 */
export const CONSOLE_PAYMENTS_META = "console-payments"
/** The hosted checkout page with the branding of its query, for the console's live preview (framed by the console only). */
export const CONSOLE_CHECKOUT_PREVIEW_PATH = "/console/checkout-preview"
/** The console's sign-in (POST) and sign-out (DELETE): the only routes that set or clear the session cookie. */
export const CONSOLE_SESSION_PATH = "/console/session"
/** The console's registration of a new organization: signs the new owner in like CONSOLE_SESSION_PATH. */
export const CONSOLE_REGISTER_PATH = "/console/register"
/** Asks for a password-reset e-mail from the signed-out console (POST `{ email }`), as `POST /auth/forgot-password`. */
export const CONSOLE_PASSWORD_RESET_PATH = "/console/password-reset"

/**
 * What the console's sign-in answers: who signed in, never the session token itself (it is in the
 * HttpOnly cookie, out of the page's reach).
 */
export class ConsoleSignedIn extends Schema.Class<ConsoleSignedIn>("ConsoleSignedIn")({
  object: Schema.Literal("console_session"),
  user: User,
  expires_at: Schema.String
}) {}

/** The console sign-in form: the fields of `POST /auth/login`. */
export const ConsoleSignIn = LoginDto
/** The console registration form: the fields of `POST /auth/register`. */
export const ConsoleRegister = RegisterDto
/**
 * The console's "forgot your password" form: `POST /auth/forgot-password`'s field, checked as an e-mail
 * address so that a typing mistake is said at the field instead of answered as if a link were sent.
 */
export const ConsoleForgotPassword = Schema.Struct({ email: Email })

/**
 * Authenticates every console procedure: reads the console's session cookie or `Authorization: Bearer
 * <session token>` and provides the signed-in user as the `CurrentPrincipal`. A missing, unknown, expired,
 * idle or revoked session, or an API key, is `Unauthorized`; a call with the cookie from another origin is
 * `Forbidden`.
 */
export class ConsoleAuthentication extends RpcMiddleware.Tag<ConsoleAuthentication>()("ConsoleAuthentication", {
  provides: CurrentPrincipal,
  failure: Schema.Union(Unauthorized, Forbidden)
}) {}

/** Test mode unless asked otherwise, so live data is only ever shown on purpose. */
const Livemode = Schema.optionalWith(Schema.Boolean, { default: () => false })

/** A store's payments in figures (one mode). */
export class StoreSummary extends Schema.Class<StoreSummary>("StoreSummary")({
  store_id: StoreId,
  livemode: Schema.Boolean,
  payments: Schema.Struct({
    total: Schema.Int,
    /** Every status, zero included. */
    by_status: Schema.Record({ key: PaymentStatus, value: Schema.Int })
  }),
  /** Per currency the store has payments in: the amount of its paid payments, and what was refunded of it. */
  volume: Schema.partial(Schema.Record({
    key: Currency,
    value: Schema.Struct({ paid: Schema.String, refunded: Schema.String })
  })),
  /** When the latest payment was paid (ISO 8601); null while none has been. */
  last_payment_at: Schema.NullOr(Schema.String)
}) {}

/** A payment of the followed store changed: its state after the change. */
export class PaymentChanged extends Schema.TaggedClass<PaymentChanged>()("PaymentChanged", {
  id: PaymentId,
  status: PaymentStatus,
  amount: Schema.String,
  currency: Currency,
  amount_refunded: Schema.String,
  /** Grows by one with each change of the payment; a later frame of the same payment has a greater one. */
  version: Schema.Int
}) {}

/**
 * Every change from here on follows: re-read (ListPayments) now for what happened before. Sent first, once
 * the feed is subscribed, and again whenever changes may have been missed (the server's database listener
 * reconnected).
 */
export class PaymentFeedSynced extends Schema.TaggedClass<PaymentFeedSynced>()("PaymentFeedSynced", {
  reason: Schema.Literal("subscribed", "reconnected")
}) {}

export const PaymentFeedFrame = Schema.Union(PaymentFeedSynced, PaymentChanged)
export type PaymentFeedFrame = typeof PaymentFeedFrame.Type

/** A store the user may see, with what the console's mode switch needs to know of it. */
export class ConsoleStore extends Schema.Class<ConsoleStore>("ConsoleStore")({
  id: StoreId,
  organization_id: OrganizationId,
  name: Schema.String,
  /** Live mode is offered only once the store may use it (KYC approved, provider credentials set). */
  live_mode: Schema.Boolean
}) {}

/**
 * The signed-in user, their organizations (with their role), the stores they may see, and the access
 * matrix the server enforces (which role is granted which permission), so the console shows what a role
 * may not do before the server refuses it.
 */
export class ConsoleContext extends Schema.Class<ConsoleContext>("ConsoleContext")({
  me: Me,
  stores: Schema.Array(ConsoleStore),
  access: Schema.Array(MatrixRow)
}) {}

/**
 * The first page of a store's payments in one mode, unfiltered, as `ListPayments` answers it with
 * CONSOLE_PAYMENTS_PAGE_SIZE: carried by the payments page for the workspace a new tab opens on (the first
 * store, test mode). A tab that chose another store or mode asks for its own.
 */
export class CarriedPayments extends Schema.Class<CarriedPayments>("CarriedPayments")({
  store_id: StoreId,
  livemode: Schema.Boolean,
  page: PaymentList
}) {}

/** A payment with what its detail page shows beside it: its refunds, newest first. */
export class PaymentDetail extends Schema.Class<PaymentDetail>("PaymentDetail")({
  payment: Payment,
  refunds: RefundList
}) {}

/** The console's home figures of one store and mode: the payments in figures and the daily revenue. */
export class HomeMetrics extends Schema.Class<HomeMetrics>("HomeMetrics")({
  summary: StoreSummary,
  /** The last 30 days, today included, one row per UTC day. */
  revenue: Timeseries
}) {}

/** Failures of procedures that read one store or one payment. */
const ReadErrors = Schema.Union(Forbidden, NotFound)

/** What a create with an Idempotency-Key may answer: a replayed answer may be any error the route answered. */
export const IdempotentCreateErrors = Schema.Union(
  InvalidRequest,
  Forbidden,
  NotFound,
  InvalidState,
  MfaRequired,
  IdempotencyConflict,
  Unauthorized,
  RateLimited,
  ServiceUnavailable
)

/** The procedures of the console's first screen: the context, and the payments area. */
export class ConsoleShellRpcs extends RpcGroup.make(
  /** A store's payments of one mode, newest first; the same page as `GET /v1/payments`. */
  Rpc.make("ListPayments", {
    payload: Schema.Struct({
      store_id: StoreId,
      livemode: Livemode,
      limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, MAX_LIST_LIMIT)), {
        default: () => DEFAULT_LIST_LIMIT
      }),
      cursor: ListParams.fields.cursor,
      status: Schema.optional(PaymentStatus),
      reference_id: PaymentListParams.fields.reference_id,
      "created[gte]": PaymentListParams.fields["created[gte]"],
      "created[lte]": PaymentListParams.fields["created[lte]"]
    }),
    success: PaymentList,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  Rpc.make("GetPayment", {
    payload: { id: PaymentId },
    success: Payment,
    error: ReadErrors
  }),
  /**
   * Refunds a paid payment in full (no `amount`) or in part, under the rules of
   * `POST /v1/payments/:id/refund`; `idempotency_key` is that route's Idempotency-Key, and the two share keys.
   */
  Rpc.make("RefundPayment", {
    payload: {
      id: PaymentId,
      ...CreateRefund.fields,
      idempotency_key: IdempotencyHeaders.fields["idempotency-key"]
    },
    success: Refund,
    error: IdempotentCreateErrors
  }),
  /** The signed-in user, their organizations and stores (`GET /auth/me` with `GET /dashboard/stores`). */
  Rpc.make("Context", {
    success: ConsoleContext,
    error: Schema.Union(Unauthorized, Forbidden, InvalidRequest)
  }),
  /** A payment with its refunds. */
  Rpc.make("PaymentDetail", {
    payload: { id: PaymentId },
    success: PaymentDetail,
    error: Schema.Union(Forbidden, NotFound, InvalidRequest)
  }),
  /**
   * Creates a test-mode payment of a store under the rules of `POST /v1/payments`; `idempotency_key` is
   * that route's Idempotency-Key (the console makes one per form submission).
   */
  Rpc.make("CreateTestPayment", {
    payload: {
      store_id: StoreId,
      ...CreatePayment.fields,
      idempotency_key: IdempotencyHeaders.fields["idempotency-key"]
    },
    success: Payment,
    error: IdempotentCreateErrors
  }),
  /** Moves a test-mode payment as `POST /v1/payments/:id/simulate` does: scanned, paid, failed or expired. */
  Rpc.make("SimulatePayment", {
    payload: { id: PaymentId, status: SimulateStatus },
    success: Payment,
    error: Schema.Union(Forbidden, NotFound, InvalidState, InvalidRequest)
  }),
  /** The home page's figures of a store in one mode. */
  Rpc.make("HomeMetrics", {
    payload: Schema.Struct({ store_id: StoreId, livemode: Livemode }),
    success: HomeMetrics,
    error: Schema.Union(Forbidden, NotFound, InvalidRequest)
  }),
  Rpc.make("StoreSummary", {
    payload: Schema.Struct({ store_id: StoreId, livemode: Livemode }),
    success: StoreSummary,
    error: ReadErrors
  }),
  /**
   * The live payments of a store in one mode: a `PaymentFeedSynced` once subscribed, then a
   * `PaymentChanged` for every change of one of its payments, its creation included.
   * The feed ends after a while (see PAYMENT_FEED_LIFETIME in src/payments); subscribe again, which
   * authenticates and authorizes afresh.
   */
  Rpc.make("PaymentFeed", {
    payload: Schema.Struct({ store_id: StoreId, livemode: Livemode }),
    success: PaymentFeedFrame,
    error: ReadErrors,
    stream: true
  })
).middleware(ConsoleAuthentication) {}
