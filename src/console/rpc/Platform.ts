/**
 * The platform administrators' procedures (domain/console/Platform.ts): each one call of a service that
 * refuses anyone but a platform administrator.
 */
import { Effect } from "effect"
import { ConsolePlatformRpcs } from "../../../domain/console/Platform.ts"
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from "../../../domain/Lists.ts"
import { AiService } from "../../ai/Service.ts"
import { LedgerService } from "../../ledger/Service.ts"
import { SecurityService } from "../../security/Service.ts"
import { SettingsService } from "../../settings/Service.ts"
import { VerificationService } from "../../verification/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsolePlatformLive = ConsolePlatformRpcs.toLayer(Effect.gen(function*() {
  const verification = yield* VerificationService
  const settings = yield* SettingsService
  const security = yield* SecurityService
  const ai = yield* AiService
  const ledger = yield* LedgerService
  return ConsolePlatformRpcs.of({
    ListVerifications: ({ cursor, limit, status }) =>
      hideDefects(verification.adminList({ limit: limit ?? DEFAULT_LIST_LIMIT, cursor, status })),
    ApproveVerification: ({ id }) => hideDefects(verification.approve(id)),
    RejectVerification: ({ id, reason }) => hideDefects(verification.reject(id, reason)),
    ListPlatformSettings: ({ cursor }) => hideDefects(settings.list({ limit: MAX_LIST_LIMIT, cursor })),
    SetPlatformSetting: ({ key, value }) => hideDefects(settings.set(key, value)),
    ClearPlatformSetting: ({ key }) => hideDefects(settings.clear(key)),
    SecurityPosture: () => hideDefects(security.posture()),
    Monitoring: () => hideDefects(security.monitoring()),
    PlatformAiUsage: () => hideDefects(ai.platformUsage()),
    PlatformTrialBalance: ({ livemode }) => hideDefects(ledger.platformTrialBalance(livemode)),
    PlatformReconcile: () => hideDefects(ledger.platformReconcile())
  })
}))
