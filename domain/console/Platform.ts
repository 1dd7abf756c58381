/**
 * The platform administrators' procedures: the KYC review queue, platform settings, security posture,
 * monitoring, AI usage by store and the ledger across stores. Every handler calls a service that refuses
 * anyone but a platform administrator (`Forbidden`), whatever the console shows.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { AiPlatformUsage } from "../Ai.ts"
import { Reconciliation, TrialBalance } from "../Ledger.ts"
import { Monitoring, SecurityPosture } from "../Security.ts"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { VerificationId } from "../Ids.ts"
import { ListParams, MAX_LIST_LIMIT } from "../Lists.ts"
import { PlatformSetting, PlatformSettingList, SetSetting, SettingKey } from "../Settings.ts"
import { RejectVerification, Verification, VerificationList, VerificationStatus } from "../Verification.ts"

const Limit = Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_LIST_LIMIT)))
const Failures = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)

export class ConsolePlatformRpcs extends RpcGroup.make(
  Rpc.make("ListVerifications", {
    payload: { status: Schema.optional(VerificationStatus), cursor: ListParams.fields.cursor, limit: Limit },
    success: VerificationList,
    error: Failures
  }),
  Rpc.make("ApproveVerification", { payload: { id: VerificationId }, success: Verification, error: Failures }),
  Rpc.make("RejectVerification", { payload: { id: VerificationId, ...RejectVerification.fields }, success: Verification, error: Failures }),
  Rpc.make("ListPlatformSettings", { payload: { cursor: ListParams.fields.cursor }, success: PlatformSettingList, error: Failures }),
  Rpc.make("SetPlatformSetting", { payload: { key: SettingKey, ...SetSetting.fields }, success: PlatformSetting, error: Failures }),
  Rpc.make("ClearPlatformSetting", { payload: { key: SettingKey }, success: PlatformSetting, error: Failures }),
  Rpc.make("SecurityPosture", { success: SecurityPosture, error: Failures }),
  Rpc.make("Monitoring", { success: Monitoring, error: Failures }),
  Rpc.make("PlatformAiUsage", { success: AiPlatformUsage, error: Failures }),
  Rpc.make("PlatformTrialBalance", {
    payload: Schema.Struct({ livemode: Schema.optionalWith(Schema.Boolean, { default: () => false }) }),
    success: TrialBalance, error: Failures }),
  Rpc.make("PlatformReconcile", { success: Reconciliation, error: Failures })
).middleware(ConsoleAuthentication) {}
