/**
 * The console's RPC (`POST /rpc`, newline-delimited JSON): what the merchant console reads and does over
 * one typed protocol, with a live feed of a store's payments. Every procedure needs a user session: the
 * console's session cookie (set by CONSOLE_SESSION_PATH), or `Authorization: Bearer <session token>` from
 * /auth/login; API keys are refused. The handlers call the
 * same services as the REST routes, so the same rules apply: another tenant's store or payment is
 * `NotFound`, a role without the permission is `Forbidden`.
 *
 * The typed client is built from this group in ConsoleClient.ts.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { Forbidden, InvalidRequest, InvalidState, NotFound, Unauthorized } from "./Errors.ts"
import { Acknowledgement, ChangePasswordDto, MfaCodeDto, MfaSetup, User } from "./Accounts.ts"
import { ApiKey, ApiKeyList, ApiKeyMode, ApiKeyWithSecret, CreateApiKey } from "./ApiKeys.ts"
import { Play } from "./Games.ts"
import { ApiKeyId, CustomerId, GameId, OrganizationId, StoreId, WebhookDeliveryId, WebhookEndpointId } from "./Ids.ts"
import {
  CreateWebhookEndpoint,
  DeletedWebhookEndpoint,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookEvent
} from "./Webhooks.ts"
import { PointsEntry } from "./Loyalty.ts"
import { ListParams } from "./Lists.ts"
import { ConsoleAuthentication, ConsoleShellRpcs, ConsoleStore } from "./console/Core.ts"

/** The console's paths, its session, its context and its payments area: in console/Core.ts, named here too. */
export {
  CONSOLE_CHECKOUT_PREVIEW_PATH,
  CONSOLE_CONTEXT_META,
  CONSOLE_EVERY_PAGE_LOADED_MARK,
  CONSOLE_PASSWORD_RESET_PATH,
  CONSOLE_PATH,
  CONSOLE_PAYMENTS_META,
  CONSOLE_PAYMENTS_PAGE_SIZE,
  CONSOLE_PAYMENTS_PATH,
  CONSOLE_REGISTER_PATH,
  CONSOLE_RPC_PATH,
  CONSOLE_SESSION_PATH,
  CarriedPayments,
  ConsoleAuthentication,
  ConsoleContext,
  ConsoleForgotPassword,
  ConsoleRegister,
  ConsoleShellRpcs,
  ConsoleSignedIn,
  ConsoleSignIn,
  ConsoleStore,
  HomeMetrics,
  PaymentChanged,
  PaymentDetail,
  PaymentFeedFrame,
  PaymentFeedSynced,
  StoreSummary
} from "./console/Core.ts"

/** Failures of procedures that read one customer or one game. */
const ReadErrors = Schema.Union(Forbidden, NotFound)

/** A points entry of the followed wallet was written: the entry, as `GET /dashboard/customers/{id}/loyalty` lists it. */
export class PointsEntryAdded extends Schema.TaggedClass<PointsEntryAdded>()("PointsEntryAdded", {
  entry: PointsEntry
}) {}

/**
 * Every entry from here on follows: re-read the ledger now for what happened before. Sent first, once the
 * feed is subscribed, and again whenever entries may have been missed (the database listener reconnected).
 */
export class WalletFeedSynced extends Schema.TaggedClass<WalletFeedSynced>()("WalletFeedSynced", {
  reason: Schema.Literal("subscribed", "reconnected")
}) {}

export const WalletFeedFrame = Schema.Union(WalletFeedSynced, PointsEntryAdded)
export type WalletFeedFrame = typeof WalletFeedFrame.Type

/** A play of the followed game was recorded (a scratch card issued, or a draw): the play, as the REST routes show it. */
export class PlayRecorded extends Schema.TaggedClass<PlayRecorded>()("PlayRecorded", {
  play: Play
}) {}

/**
 * Every play from here on follows: re-read the game's plays now for what happened before. Sent first, once the
 * feed is subscribed, and again whenever plays may have been missed (the database listener reconnected).
 */
export class GamePlaysFeedSynced extends Schema.TaggedClass<GamePlaysFeedSynced>()("GamePlaysFeedSynced", {
  reason: Schema.Literal("subscribed", "reconnected")
}) {}

export const GamePlaysFeedFrame = Schema.Union(GamePlaysFeedSynced, PlayRecorded)
export type GamePlaysFeedFrame = typeof GamePlaysFeedFrame.Type

/**
 * The console's first procedures beyond its core (console/Core.ts): the user's security, a new store, API
 * keys, webhooks, and the live feeds of a wallet and of a game's plays.
 */
class ConsoleFirstAreasRpcs extends RpcGroup.make(
  /** Starts MFA enrolment (`POST /auth/mfa/setup`): the secret and its otpauth:// URL, for the QR code. */
  Rpc.make("MfaSetup", {
    success: MfaSetup,
    error: Schema.Union(Unauthorized, Forbidden, InvalidState)
  }),
  /** Turns MFA on with a code of the enrolled secret (`POST /auth/mfa/enable`). */
  Rpc.make("MfaEnable", {
    payload: MfaCodeDto.fields,
    success: User,
    error: Schema.Union(Unauthorized, Forbidden, InvalidState, InvalidRequest)
  }),
  /** Changes the password (`POST /auth/password`); the user's other sessions are signed out. */
  Rpc.make("ChangePassword", {
    payload: ChangePasswordDto.fields,
    success: Acknowledgement,
    error: Schema.Union(Unauthorized, Forbidden, InvalidRequest)
  }),
  /** Creates a store in one of the user's organizations (the first one unless named), as `POST /dashboard/stores`. */
  Rpc.make("CreateStore", {
    payload: { name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)), organization_id: Schema.optional(OrganizationId) },
    success: ConsoleStore,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  /** A store's API keys, newest first (`GET /dashboard/stores/:id/api-keys`); never their secrets. */
  Rpc.make("ListApiKeys", {
    payload: { store_id: StoreId, cursor: ListParams.fields.cursor },
    success: ApiKeyList,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  /** Creates an API key (`POST /dashboard/api-keys`): its secret is in this answer only. */
  Rpc.make("CreateApiKey", {
    payload: { store_id: StoreId, mode: ApiKeyMode, name: CreateApiKey.fields.name },
    success: ApiKeyWithSecret,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  /** Replaces a key by a new one with the same name and mode; the old one stops working now. */
  Rpc.make("RotateApiKey", {
    payload: { id: ApiKeyId },
    success: ApiKeyWithSecret,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  Rpc.make("RevokeApiKey", {
    payload: { id: ApiKeyId },
    success: ApiKey,
    error: Schema.Union(Forbidden, NotFound, InvalidRequest)
  }),
  /** A store's webhook endpoints (`GET /dashboard/webhook-endpoints`); never their secrets. */
  Rpc.make("ListWebhookEndpoints", {
    payload: { store_id: StoreId, cursor: ListParams.fields.cursor },
    success: WebhookEndpointList,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  /** Creates an endpoint (`POST /dashboard/webhook-endpoints`): its signing secret is in this answer. */
  Rpc.make("CreateWebhookEndpoint", {
    payload: CreateWebhookEndpoint.fields,
    success: WebhookEndpointWithSecret,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  /** Turns an endpoint's deliveries on or off (`PATCH /dashboard/webhook-endpoints/:id`). */
  Rpc.make("SetWebhookEndpointEnabled", {
    payload: { id: WebhookEndpointId, enabled: Schema.Boolean },
    success: WebhookEndpoint,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  Rpc.make("DeleteWebhookEndpoint", {
    payload: { id: WebhookEndpointId },
    success: DeletedWebhookEndpoint,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  /** An endpoint's delivery attempts, newest first. */
  Rpc.make("WebhookDeliveries", {
    payload: { id: WebhookEndpointId, cursor: ListParams.fields.cursor },
    success: WebhookDeliveryList,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  /** Sends a delivered event again, as a new attempt after the endpoint's earlier deliveries. */
  Rpc.make("ResendWebhookDelivery", {
    payload: { id: WebhookDeliveryId },
    success: WebhookEvent,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
  }),
  /**
   * A customer's points entries as they are written: a `WalletFeedSynced` once subscribed, then a
   * `PointsEntryAdded` for every entry (earn, reverse, redeem, cancel, adjust, credits). Needs customer.read
   * on the customer's store; ends after a while like PaymentFeed (subscribe again).
   */
  Rpc.make("WalletFeed", {
    payload: Schema.Struct({ customer_id: CustomerId }),
    success: WalletFeedFrame,
    error: ReadErrors,
    stream: true
  }),
  /**
   * The plays of a game as they are recorded: a `GamePlaysFeedSynced` once subscribed, then a `PlayRecorded`
   * for every issued scratch card and every draw (instant plays and reveals). Needs customer.read on the
   * game's store; ends after a while like PaymentFeed (subscribe again).
   */
  Rpc.make("GamePlaysFeed", {
    payload: Schema.Struct({ game_id: GameId }),
    success: GamePlaysFeedFrame,
    error: ReadErrors,
    stream: true
  })
).middleware(ConsoleAuthentication) {}

/**
 * The console's first procedures: its core (context, payments) and the groups above. Each later area adds
 * its own group in `domain/console/<Area>.ts` (with `.middleware(ConsoleAuthentication)`), and ConsoleRpcs
 * (domain/ConsoleRpcs.ts) merges them.
 */
export const ConsoleCoreRpcs = ConsoleShellRpcs.merge(ConsoleFirstAreasRpcs)
