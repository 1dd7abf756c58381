/**
 * Every procedure of the console RPC: the core group (Console.ts) and each area's group
 * (`domain/console/<Area>.ts`), one `.merge` line an area. The server (src/console/Rpc.ts) and the typed
 * client (ConsoleClient.ts, the web app) are both built from this one group.
 */
import { ConsoleCoreRpcs } from "./Console.ts"
import { ConsoleGamesRpcs } from "./console/Games.ts"
import { ConsoleInsightsRpcs } from "./console/Insights.ts"
import { ConsoleIntegrationsRpcs } from "./console/Integrations.ts"
import { ConsolePlatformRpcs } from "./console/Platform.ts"

export const ConsoleRpcs = ConsoleCoreRpcs
  .merge(ConsoleGamesRpcs)
  .merge(ConsoleInsightsRpcs)
  .merge(ConsoleIntegrationsRpcs)
  .merge(ConsolePlatformRpcs)
