/**
 * The platform's security posture and monitoring figures, read from the current state at each call
 * (platform administrators only).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Redacted } from "effect"
import { isIP } from "node:net"
import { Monitoring, PostureCheck, SecurityPosture } from "../../domain/Security.ts"
import { ownersAndAdminsWithoutMfa } from "../accounts/Memberships.ts"
import { AccessService } from "../access/Service.ts"
import { activeKeysCreatedBefore } from "../apikeys/Reads.ts"
import { AppConfig } from "../platform/Config.ts"
import { undispatchedBacklog } from "../platform/OutboxReads.ts"
import { PaymentReports } from "../payments/Reports.ts"
import { BaseUrlSettings } from "../settings/Known.ts"
import { SettingsService } from "../settings/Service.ts"
import { joinableStores } from "../stores/Reads.ts"
import { healthyRunnersAndShards } from "../system/ClusterReads.ts"
import { approvedOrganizations } from "../verification/Reads.ts"
import { hostOf, refusedRangeOf } from "../webhooks/Destination.ts"
import { deliveryBacklog, endpointsWithoutHttps } from "../webhooks/Reads.ts"
import { requestsLastMinute } from "../platform/Metrics.ts"
import { currentDate } from "../platform/Time.ts"
import { traced } from "../platform/Traced.ts"

const API_KEY_MAX_AGE_DAYS = 90
const DAY_MILLIS = 24 * 60 * 60 * 1000

const check = (id: string, title: string, status: "pass" | "warn" | "fail", detail: string) =>
  new PostureCheck({ id, title, status, detail })

const countCheck = (id: string, title: string, count: number, bad: "warn" | "fail", what: string) =>
  check(id, title, count === 0 ? "pass" : bad, count === 0 ? `No ${what}` : `${count} ${what}`)

/**
 * Why a provider's base URL is not a public address, or undefined when it is: a loopback, link-local,
 * private (or otherwise non-public) IP literal, a `localhost` name, or no http(s) URL at all. Host names
 * are not resolved here (the posture must answer at once, and the provider may only be reachable from
 * the servers); an internal name that resolves to a private address is not caught.
 */
export const nonPublicReasonOf = (value: string): string | undefined => {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return "not a URL"
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "not an http(s) URL"
  const host = hostOf(url).toLowerCase()
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback"
  return isIP(host) === 0 ? undefined : refusedRangeOf(host)
}

export class SecurityService extends Effect.Service<SecurityService>()("security/SecurityService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const access = yield* AccessService
    const reports = yield* PaymentReports
    const config = yield* AppConfig
    const settings = yield* SettingsService

    /** Each provider base URL in effect (setting or environment) that is not a public address. */
    const nonPublicBaseUrls = Effect.forEach(BaseUrlSettings, (key) =>
      Effect.map(settings.get(key), (value) => {
        if (Option.isNone(value)) return []
        const reason = nonPublicReasonOf(Redacted.value(value.value))
        // The host only: an address from the environment is not checked on the way in and may carry a
        // credential.
        const host = URL.canParse(Redacted.value(value.value)) ? ` (${new URL(Redacted.value(value.value)).host})` : ""
        return reason === undefined ? [] : [`${key}${host}: ${reason}`]
      })).pipe(Effect.map((found) => found.flat()))

    const count = (query: Effect.Effect<ReadonlyArray<{ n: number }>, unknown>) =>
      Effect.map(query, (rows) => rows[0]?.n ?? 0).pipe(Effect.orDie)

    // Each figure is its owner's read (the keys', the endpoints', the verifications' relation): the posture and
    // monitoring cover every store, which no store's access check does, so they cannot ask the owners' services.
    const posture = traced("Security.posture")(function*() {
      yield* access.requirePlatformAdmin
      const now = yield* currentDate
      const keyCutoff = new Date(now.getTime() - API_KEY_MAX_AGE_DAYS * DAY_MILLIS)
      const withoutMfa = yield* ownersAndAdminsWithoutMfa(sql)
      const oldKeys = yield* activeKeysCreatedBefore(sql, keyCutoff)
      const plainUrls = yield* endpointsWithoutHttps(sql)
      const unverifiedLive = yield* count(sql<{ n: number }>`
        SELECT count(*)::int AS n FROM (${joinableStores(sql)}) s WHERE s.live_mode AND NOT EXISTS (
          SELECT 1 FROM (${approvedOrganizations(sql)}) v WHERE v.organization_id = s.organization_id)`)
      const baseUrls = yield* nonPublicBaseUrls
      const checks = [
        Option.isSome(config.masterKey)
          ? check("master_key", "Master key source", "pass", "MASTER_KEY comes from the environment")
          : check("master_key", "Master key source", "warn", "The master key is a generated file in the data directory"),
        config.production
          ? check("production_mode", "Production mode", "pass", "NODE_ENV=production")
          : check("production_mode", "Production mode", "warn", "NODE_ENV is not production"),
        config.webhookAllowPrivateNetworks
          ? check("private_webhooks", "Private-network webhooks", "fail", "WEBHOOK_ALLOW_PRIVATE_NETWORKS is true")
          : check("private_webhooks", "Private-network webhooks", "pass", "Webhook URLs on private networks are refused"),
        Option.isSome(config.mail.smtpUrl)
          ? check("mail_delivery", "Mail delivery", "pass", "Mail is delivered over SMTP (SMTP_URL)")
          : config.production
          ? check("mail_delivery", "Mail delivery", "fail", "SMTP_URL is not set: verification, password-reset and receipt mail is not delivered")
          : check("mail_delivery", "Mail delivery", "warn", "SMTP_URL is not set: mail is written to the log instead of sent"),
        countCheck("admin_mfa", "Owners and admins with MFA", withoutMfa, "fail", "owners or admins without MFA"),
        countCheck("api_key_age", `API keys younger than ${API_KEY_MAX_AGE_DAYS} days`, oldKeys, "warn", `active API keys older than ${API_KEY_MAX_AGE_DAYS} days`),
        countCheck("webhook_https", "Webhook URLs over HTTPS", plainUrls, "warn", "webhook URLs without HTTPS"),
        countCheck("live_store_kyc", "Live stores verified", unverifiedLive, "fail", "live stores without approved verification"),
        baseUrls.length === 0
          ? check("integration_addresses", "Provider base URLs on public addresses", "pass", "No provider base URL points at a loopback, link-local or private address")
          : check("integration_addresses", "Provider base URLs on public addresses", "warn", baseUrls.join("; "))
      ]
      const points = checks.reduce((sum, c) => sum + (c.status === "pass" ? 1 : c.status === "warn" ? 0.5 : 0), 0)
      return new SecurityPosture({ object: "security_posture", score: Math.round((100 * points) / checks.length), checks })
    })

    const monitoring = traced("Security.monitoring")(function*() {
      yield* access.requirePlatformAdmin
      const now = yield* currentDate
      const started = performance.now()
      const ping = yield* sql`SELECT 1`.pipe(Effect.as(true), Effect.orElseSucceed(() => false))
      const latency = Math.round((performance.now() - started) * 100) / 100
      const hourAgo = new Date(now.getTime() - 60 * 60 * 1000)
      const minuteAgo = new Date(now.getTime() - 60 * 1000)
      const outbox = yield* undispatchedBacklog(sql)
      const webhooks = yield* deliveryBacklog(sql, hourAgo)
      const paymentsLastMinute = yield* reports.createdSince(minuteAgo)
      const cluster = yield* healthyRunnersAndShards(sql)
      return new Monitoring({
        object: "monitoring",
        database: { ok: ping, latency_ms: latency },
        cluster,
        outbox: {
          pending: outbox.pending,
          oldest_age_seconds: outbox.oldest === null ? 0 : Math.max(0, Math.round((now.getTime() - outbox.oldest.getTime()) / 1000))
        },
        webhooks: { pending: webhooks.jobs, failed_last_hour: webhooks.failed },
        throughput: { payments_last_minute: paymentsLastMinute, requests_last_minute: requestsLastMinute() },
        process: { uptime_seconds: Math.round(process.uptime()), rss_bytes: process.memoryUsage().rss }
      })
    })

    return { posture, monitoring } as const
  }),
  dependencies: [AccessService.Default, SettingsService.Default, PaymentReports.Default]
}) {}
