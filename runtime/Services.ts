/**
 * The business services every HTTP handler, RPC handler and entity may use. A service layer brings
 * its own repos; what it needs from the outside (SQL client, sharding, master key, configuration) is
 * provided by the runtime.
 */
import { Layer } from "effect"
import { AccessService } from "../src/access/Service.ts"
import { AccountsService } from "../src/accounts/Service.ts"
import { ApiKeysRepo } from "../src/apikeys/Repo.ts"
import { ApiKeyCache } from "../src/apikeys/KeyCache.ts"
import { StoresService } from "../src/stores/Service.ts"
import { SystemService } from "../src/system/Service.ts"
import { MetricsService } from "../src/system/Metrics.ts"
import { VerificationService } from "../src/verification/Service.ts"
import { ApiKeysService } from "../src/apikeys/Service.ts"
import { SettingsService } from "../src/settings/Service.ts"
import { AccessConsoleService } from "../src/access/Console.ts"
import { PaymentsService } from "../src/payments/Service.ts"
import { WebhooksService } from "../src/webhooks/Service.ts"
import { CheckoutService } from "../src/checkout/Service.ts"
import { StreamSlots } from "../src/checkout/StreamSlots.ts"
import { LinksService } from "../src/links/Service.ts"
import { EcosystemService } from "../src/ecosystem/Service.ts"
import { CustomersService } from "../src/customers/Service.ts"
import { LoyaltyService } from "../src/loyalty/Service.ts"
import { SegmentsService } from "../src/segments/Service.ts"
import { PromotionsService } from "../src/promotions/Service.ts"
import { ReferralsService } from "../src/referrals/Service.ts"
import { AnalyticsService } from "../src/analytics/Service.ts"
import { LedgerService } from "../src/ledger/Service.ts"
import { RevenueSharesService } from "../src/revenue-shares/Service.ts"
import { RiskService } from "../src/risk/Service.ts"
import { AiService } from "../src/ai/Service.ts"
import { ConnectorsService } from "../src/connectors/Service.ts"
import { NotificationsService } from "../src/notifications/Service.ts"
import { SecurityService } from "../src/security/Service.ts"
import { BillingService } from "../src/billing/Service.ts"
import { GamesService } from "../src/games/Service.ts"
import { RateLimiter } from "../src/platform/RateLimit.ts"
import { MailService } from "../src/mail/Service.ts"

export const ServicesLive = Layer.mergeAll(
  SystemService.Default,
  MetricsService.Default,
  StoresService.Default,
  VerificationService.Default,
  AccessService.Default,
  AccountsService.Default,
  ApiKeysRepo.Default,
  ApiKeyCache.Default,
  ApiKeysService.Default,
  SettingsService.Default,
  AccessConsoleService.Default,
  WebhooksService.Default,
  PaymentsService.Default,
  CheckoutService.Default,
  StreamSlots.Default,
  LinksService.Default,
  EcosystemService.Default,
  CustomersService.Default,
  LoyaltyService.Default,
  SegmentsService.Default,
  PromotionsService.Default,
  ReferralsService.Default,
  AnalyticsService.Default,
  LedgerService.Default,
  RevenueSharesService.Default,
  RiskService.Default,
  AiService.Default,
  ConnectorsService.Default,
  NotificationsService.Default,
  SecurityService.Default,
  BillingService.Default,
  GamesService.Default,
  RateLimiter.Default,
  MailService.Default
)
