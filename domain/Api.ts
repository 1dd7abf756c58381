/**
 * The service's HTTP interface: every group of every area, the shared errors, and the OpenAPI
 * metadata. The server, the OpenAPI document, /docs and the typed client are all built from this.
 */
import { HttpApi, HttpApiSchema, OpenApi } from "@effect/platform"
import {
  DecodeErrorResponse,
  InternalErrorResponse,
  InvalidRequestResponse,
  MethodNotAllowedResponse,
  PayloadTooLargeResponse,
  UnsupportedMediaTypeResponse
} from "./Errors.ts"
import { completeReference } from "./Reference.ts"
import { QUICKSTART_MARKDOWN } from "./Quickstart.ts"
import { API_VERSION } from "./Version.ts"
import { AuthGroup, MembersGroup, SessionGroup } from "./Accounts.ts"
import { BranchesGroup, StoresGroup } from "./Stores.ts"
import { SystemGroup } from "./System.ts"
import { VerificationGroup } from "./Verification.ts"
import { ApiKeysGroup } from "./ApiKeys.ts"
import { SettingsGroup } from "./Settings.ts"
import { AccessGroup } from "./Access.ts"
import { PaymentsGroup } from "./Payments.ts"
import { WebhooksGroup } from "./Webhooks.ts"
import { CheckoutGroup } from "./Checkout.ts"
import { LinksGroup, PublicLinksGroup } from "./Links.ts"
import { EcosystemGroup } from "./Ecosystem.ts"
import { CustomerConsoleGroup, CustomersGroup } from "./Customers.ts"
import { LoyaltyConsoleGroup, LoyaltyGroup, WalletGroup } from "./Loyalty.ts"
import { PromotionsGroup, SegmentsGroup } from "./Promotions.ts"
import { AnalyticsGroup } from "./Analytics.ts"
import { LedgerGroup } from "./Ledger.ts"
import { RevenueSharesGroup } from "./RevenueShares.ts"
import { RiskGroup } from "./Risk.ts"
import { AiGroup } from "./Ai.ts"
import { ConnectorsGroup } from "./Connectors.ts"
import { NotificationsGroup } from "./Notifications.ts"
import { SecurityGroup } from "./Security.ts"
import { BillingGroup } from "./Billing.ts"
import { ReferralLinkGroup, ReferralsConsoleGroup, ReferralsGroup } from "./Referrals.ts"
import { GamesConsoleGroup, GamesGroup, HostedGamesGroup } from "./Games.ts"
import { MailGroup } from "./Mail.ts"

const Groups = HttpApi.make("merchant-platform")
  .add(SystemGroup)
  .add(StoresGroup)
  .add(BranchesGroup)
  .add(VerificationGroup)
  .add(AuthGroup)
  .add(SessionGroup)
  .add(MembersGroup)
  .add(ApiKeysGroup)
  .add(SettingsGroup)
  .add(AccessGroup)
  .add(PaymentsGroup)
  .add(WebhooksGroup)
  .add(CheckoutGroup)
  .add(LinksGroup)
  .add(PublicLinksGroup)
  .add(EcosystemGroup)
  .add(CustomersGroup)
  .add(CustomerConsoleGroup)
  .add(LoyaltyGroup)
  .add(LoyaltyConsoleGroup)
  .add(SegmentsGroup)
  .add(PromotionsGroup)
  .add(ReferralsGroup)
  .add(ReferralsConsoleGroup)
  .add(ReferralLinkGroup)
  .add(AnalyticsGroup)
  .add(LedgerGroup)
  .add(RevenueSharesGroup)
  .add(RiskGroup)
  .add(AiGroup)
  .add(ConnectorsGroup)
  .add(NotificationsGroup)
  .add(SecurityGroup)
  .add(BillingGroup)
  .add(WalletGroup)
  .add(GamesConsoleGroup)
  .add(GamesGroup)
  .add(HostedGamesGroup)
  .add(MailGroup)
  .addError(InvalidRequestResponse)

/**
 * Where the document says the API answers, without the service to ask: the origin the document was
 * read from. /openapi.json names PUBLIC_BASE_URL (or the origin the service listens on) instead.
 */
export const DEFAULT_SERVERS = [{ url: "/", description: "The origin this document was served from" }]

const BaseApi = Groups
  .annotateContext(OpenApi.annotations({
    title: "Merchant payments and loyalty API",
    version: API_VERSION,
    license: { name: "Proprietary" },
    servers: DEFAULT_SERVERS,
    description: [
      "KHQR payments (USD and KHR), refunds, webhooks, hosted checkout, customers and loyalty.",
      "",
      QUICKSTART_MARKDOWN.trim(),
      "",
      "## Conventions",
      "",
      "Errors always have the shape `{ \"error\": { \"code\", \"message\", \"param\" } }`.",
      "Lists are `{ object: \"list\", data, has_more, next_cursor }`, newest first; `limit` defaults",
      "to 20 and is clamped to 100; `cursor` is the previous page's `next_cursor`.",
      "An unknown path answers 404 `not_found`; a known path with another method answers 405",
      "`method_not_allowed` with an `Allow` header; a malformed JSON body answers 400 `invalid_request`.",
      "",
      "Request bodies are JSON objects (`Content-Type: application/json`; anything else is 415",
      "`unsupported_media_type`) of at most MAX_BODY_BYTES (1 MiB by default; 413 `payload_too_large`).",
      "A field the operation does not name is 400 naming it; every string has a maximum length; text",
      "may not contain the NUL character or an unpaired UTF-16 surrogate (400 naming the field).",
      "",
      "Webhook deliveries, their payloads and signature headers are under `webhooks`."
    ].join("\n"),
    transform: completeReference(Groups)
  }))

/**
 * The framework's schema-decode failures are rendered in the shared error envelope rather than the
 * framework's default shape: the API's own error schema is replaced by the envelope transformation.
 */
export class Api extends BaseApi {
  // The HTTP layer's own answers (405, 413, 415, 500) are listed too, so every operation documents them.
  static override readonly errorSchema = HttpApiSchema.UnionUnify(
    HttpApiSchema.UnionUnify(DecodeErrorResponse, InvalidRequestResponse),
    HttpApiSchema.UnionUnify(
      HttpApiSchema.UnionUnify(MethodNotAllowedResponse, PayloadTooLargeResponse),
      HttpApiSchema.UnionUnify(UnsupportedMediaTypeResponse, InternalErrorResponse)
    )
  ) as unknown as typeof BaseApi.errorSchema
}
