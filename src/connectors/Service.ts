/**
 * Connectors: an installed marketplace item is a webhook endpoint flagged `connector` plus its config, so
 * deliveries go through the webhook dispatcher (URL guard, signing, retries, delivery records). Secret
 * config fields are sealed with the rest of the config and masked in answers.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import {
  Connector,
  ConnectorDelivery,
  type CreateConnector,
  DeletedConnector,
  type UpdateConnector
} from "../../domain/Connectors.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { ConnectorId, EventId, StoreId, WebhookEndpointId } from "../../domain/Ids.ts"
import { AccessService, storeData, touchesStoreData } from "../access/Service.ts"
import { AppConfig } from "../platform/Config.ts"
import { maskSecret, SecretBox } from "../platform/Crypto.ts"
import { newId } from "../platform/Ids.ts"
import { currentDate } from "../platform/Time.ts"
import { checkDestination, WebhookResolver } from "../webhooks/Destination.ts"
import { joinableEndpointSettings } from "../webhooks/Reads.ts"
import { WebhooksRepo } from "../webhooks/Repo.ts"
import { newSigningSecret } from "../webhooks/Signing.ts"
import { keysetAfter, type ListParams, newestFirst, pageAfter } from "../platform/Pagination.ts"
import { Catalog, catalogItem } from "./Catalog.ts"
import { fixedPage } from "../platform/FixedList.ts"
import { traced } from "../platform/Traced.ts"

interface ConnectorRow {
  readonly id: ConnectorId
  readonly store_id: StoreId
  readonly endpoint_id: WebhookEndpointId
  readonly type: string
  readonly name: string
  readonly config_sealed: string
  readonly created_at: Date
  readonly events: ReadonlyArray<string>
  readonly enabled: boolean
}

/** How long the test route waits for the first attempt's record. */
const TEST_WAIT_MILLIS = 5000

export class ConnectorsService extends Effect.Service<ConnectorsService>()("connectors/ConnectorsService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const webhooks = storeData(yield* WebhooksRepo)
    const access = yield* AccessService
    const box = yield* SecretBox
    const config = yield* AppConfig
    const resolve = yield* WebhookResolver

    const notFound = (id: string) => new NotFound({ message: `No such connector: ${id}`, param: "connectorId" })

    const findRow = (id: ConnectorId) =>
      touchesStoreData(Effect.map(
        sql<ConnectorRow>`
          SELECT c.id, c.store_id, c.endpoint_id, c.type, c.name, c.config_sealed, c.created_at, e.events, e.enabled
          FROM connectors c JOIN (${joinableEndpointSettings(sql)}) e ON e.id = c.endpoint_id WHERE c.id = ${id}`,
        (rows) => Option.fromNullable(rows[0])
      ).pipe(Effect.orDie))

    const owned = <A, E, R>(id: ConnectorId, use: (connector: ConnectorRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(findRow(id), (row) => row.store_id, "integration.manage", () => notFound(id), use)
      )

    const toView = (row: ConnectorRow, signingSecret?: string) =>
      Effect.gen(function*() {
        const values = JSON.parse(yield* box.open(row.config_sealed)) as Record<string, string>
        const secretKeys = new Set(catalogItem(row.type)?.config_fields.filter((f) => f.secret).map((f) => f.key) ?? [])
        const masked = Object.fromEntries(
          Object.entries(values).map(([key, value]) => [key, secretKeys.has(key) ? maskSecret(value) : value])
        )
        return new Connector({
          id: row.id,
          object: "connector",
          store_id: row.store_id,
          type: row.type,
          name: row.name,
          config: masked,
          events: row.events,
          enabled: row.enabled,
          ...(signingSecret === undefined ? {} : { signing_secret: signingSecret }),
          created_at: row.created_at.toISOString()
        })
      }).pipe(Effect.orDie)

    /** The config checked against its catalog item: known fields, required ones present, an allowed URL. */
    const checkConfig = (type: string, values: Readonly<Record<string, string>>) =>
      Effect.gen(function*() {
        const item = catalogItem(type)
        if (item === undefined) {
          return yield* new InvalidRequest({
            message: `unknown marketplace key; use one of ${Catalog.map((i) => i.key).join(", ")}`,
            param: "type"
          })
        }
        for (const key of Object.keys(values)) {
          if (!item.config_fields.some((f) => f.key === key)) {
            return yield* new InvalidRequest({ message: `${type} has no config field ${key}`, param: `config.${key}` })
          }
        }
        for (const f of item.config_fields) {
          if (f.required && (values[f.key] ?? "").length === 0) {
            return yield* new InvalidRequest({ message: `${f.label} is required`, param: `config.${f.key}` })
          }
        }
        const check = yield* checkDestination(values.url ?? "", config.webhookAllowPrivateNetworks, resolve)
        if (check._tag === "Refused") return yield* new InvalidRequest({ message: `url ${check.reason}`, param: "config.url" })
        return item
      })

    const normalizeEvents = (events: ReadonlyArray<string> | undefined) =>
      events === undefined || events.length === 0 || events.includes("*") ? ["*"] : [...events]

    const install = traced("Connectors.install")(function*(storeId: StoreId, input: CreateConnector) {
      yield* access.currentUser
      return yield* access.withStore(storeId, "integration.manage", (store) =>
        Effect.gen(function*() {
          const item = yield* checkConfig(input.type, input.config)
          const id = newId("con")
          const endpointId = newId("we")
          const now = yield* currentDate
          const sealed = yield* box.seal(JSON.stringify(input.config))
          const signingSecret = newSigningSecret()
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* webhooks.insertEndpoint({
              id: endpointId,
              storeId: store.storeId,
              url: input.config.url!,
              events: normalizeEvents(input.events),
              enabled: input.enabled ?? true,
              secretSealed: yield* box.seal(signingSecret)
            })
            yield* webhooks.markConnectorEndpoint(endpointId)
            yield* sql`
              INSERT INTO connectors (id, store_id, endpoint_id, type, name, config_sealed, created_at, updated_at)
              VALUES (${id}, ${store.storeId}, ${endpointId}, ${item.key}, ${input.name ?? item.name}, ${sealed}, ${now}, ${now})`
          })).pipe(Effect.orDie)
          return yield* toView(Option.getOrThrow(yield* findRow(id)), signingSecret)
        }))
    })

    const list = traced("Connectors.list")(function*(storeId: StoreId, params: ListParams) {
      yield* access.currentUser
      return yield* access.withStore(storeId, "store.read", (store) =>
        Effect.gen(function*() {
          const columns = { createdAt: "c.created_at", id: "c.id" }
          const page = yield* pageAfter(params, (position) =>
            touchesStoreData(sql<ConnectorRow>`
              SELECT c.id, c.store_id, c.endpoint_id, c.type, c.name, c.config_sealed, c.created_at, e.events, e.enabled
              FROM connectors c JOIN (${joinableEndpointSettings(sql)}) e ON e.id = c.endpoint_id
              WHERE c.store_id = ${store.storeId} AND ${keysetAfter(sql, position, columns)}
              ORDER BY ${newestFirst(sql, columns)} LIMIT ${params.limit + 1}`.pipe(Effect.orDie)))
          return { ...page, data: yield* Effect.forEach(page.data, (row) => toView(row)) }
        }))
    })

    const update = traced("Connectors.update")(function*(id: ConnectorId, changes: UpdateConnector) {
      return yield* owned(id, (row) =>
        Effect.gen(function*() {
          const now = yield* currentDate
          let sealed = row.config_sealed
          let url: string | undefined
          if (changes.config !== undefined) {
            const current = JSON.parse(yield* box.open(row.config_sealed).pipe(Effect.orDie)) as Record<string, string>
            // A secret sent back as it was answered (masked) keeps its value: a client may PUT what it read.
            const secretKeys = new Set(catalogItem(row.type)?.config_fields.filter((f) => f.secret).map((f) => f.key) ?? [])
            const given = Object.fromEntries(
              Object.entries(changes.config).filter(([key, value]) =>
                !(secretKeys.has(key) && current[key] !== undefined && value === maskSecret(current[key]))
              )
            )
            const merged = { ...current, ...given }
            yield* checkConfig(row.type, merged)
            sealed = yield* box.seal(JSON.stringify(merged))
            url = merged.url
          }
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* webhooks.updateEndpoint(row.endpoint_id, {
              url,
              events: changes.events === undefined ? undefined : normalizeEvents(changes.events),
              enabled: changes.enabled
            }, now)
            yield* sql`
              UPDATE connectors SET name = ${changes.name ?? row.name}, config_sealed = ${sealed}, updated_at = ${now}
              WHERE id = ${id}`
          })).pipe(Effect.orDie)
          return yield* toView(Option.getOrThrow(yield* findRow(id)))
        }))
    })

    const remove = traced("Connectors.remove")(function*(id: ConnectorId) {
      return yield* owned(id, (row) =>
        Effect.gen(function*() {
          // The connector row goes with its endpoint (ON DELETE CASCADE), as do the queue and records.
          yield* webhooks.deleteEndpoint(row.endpoint_id)
          return new DeletedConnector({ id, object: "connector", deleted: true })
        }))
    })

    const test = traced("Connectors.test")(function*(id: ConnectorId) {
      return yield* owned(id, (row) =>
        Effect.gen(function*() {
          if (!row.enabled) return yield* new InvalidState({ message: `Connector ${id} is disabled; enable it first`, param: "connectorId" })
          const eventId = newId("evt") as EventId
          const now = yield* currentDate
          const body = JSON.stringify({
            id: eventId,
            object: "event",
            type: "test.event",
            created_at: now.toISOString(),
            livemode: false,
            data: { object: { object: "test", connector_id: id, store_id: row.store_id, message: "A test event from the connector's test route." } }
          })
          yield* webhooks.enqueue({ endpointId: row.endpoint_id, eventId, eventType: "test.event", body }, now)
          // The dispatcher is woken by the queue's notice; wait (wall time) for its first attempt's record.
          const started = Date.now()
          while (Date.now() - started < TEST_WAIT_MILLIS) {
            const first = yield* webhooks.firstDeliveryOfEvent(row.endpoint_id, eventId)
            if (Option.isSome(first)) {
              const record = first.value
              return new ConnectorDelivery({
                id: record.id,
                object: "connector_delivery",
                connector_id: id,
                event_id: eventId,
                event_type: "test.event",
                status: record.error === null ? "delivered" : "failed",
                status_code: record.status_code,
                error: record.error,
                created_at: record.created_at.toISOString()
              })
            }
            yield* Effect.sleep(100).pipe(Effect.withClock(Clock.make()))
          }
          return new ConnectorDelivery({
            id: eventId,
            object: "connector_delivery",
            connector_id: id,
            event_id: eventId,
            event_type: "test.event",
            status: "pending",
            status_code: null,
            error: null,
            created_at: now.toISOString()
          })
        }))
    })

    // A console route: a session token, not an API key.
    const marketplace = (params: ListParams) =>
      Effect.zipRight(access.currentUser, fixedPage(Catalog, (item) => item.key, params))

    return { marketplace, install, list, update, remove, test } as const
  }),
  dependencies: [WebhooksRepo.Default, AccessService.Default, SecretBox.Default]
}) {}
