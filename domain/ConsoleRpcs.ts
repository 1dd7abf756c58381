/**
 * Every procedure of the console RPC: the core group (Console.ts) and each area's group
 * (`domain/console/<Area>.ts`), one `.merge` line an area. The server (src/console/Rpc.ts) and the typed
 * client (ConsoleClient.ts, the web app) are both built from this one group.
 */
import { ConsoleBillingRpcs } from "./console/Billing.ts"
import { ConsoleLinksRpcs } from "./console/Links.ts"
import { ConsoleStoresRpcs } from "./console/Stores.ts"
import { ConsoleTeamRpcs } from "./console/Team.ts"
import { ConsoleWebhooksRpcs } from "./console/Webhooks.ts"
import { ConsoleCoreRpcs } from "./Console.ts"
import { ConsoleEngagementRpcs } from "./console/Engagement.ts"
import { AccountRpcs } from "./console/Account.ts"
import { DeveloperRpcs } from "./console/Developer.ts"
import { ConsoleGamesRpcs } from "./console/Games.ts"
import { ConsoleInsightsRpcs } from "./console/Insights.ts"
import { ConsoleIntegrationsRpcs } from "./console/Integrations.ts"
import { ConsolePlatformRpcs } from "./console/Platform.ts"

export const ConsoleRpcs = ConsoleCoreRpcs
  .merge(AccountRpcs)
  .merge(DeveloperRpcs)
  .merge(ConsoleTeamRpcs)
  .merge(ConsoleStoresRpcs)
  .merge(ConsoleLinksRpcs)
  .merge(ConsoleBillingRpcs)
  .merge(ConsoleWebhooksRpcs)
  .merge(ConsoleEngagementRpcs)
  .merge(ConsoleGamesRpcs)
  .merge(ConsoleInsightsRpcs)
  .merge(ConsoleIntegrationsRpcs)
  .merge(ConsolePlatformRpcs)
