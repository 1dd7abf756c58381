/**
 * The rules of webhook endpoints: who may manage them, where they may point, how their signing secrets
 * are made, kept and shown, and how a test event or a resend joins an endpoint's queue. Delivery itself
 * is the dispatcher's (Dispatcher.ts).
 */
import { Effect, Option, Schema } from "effect"
import type { Permission } from "../../domain/Access.ts"
import { InvalidRequest, InvalidState, NotFound } from "../../domain/Errors.ts"
import type { PaymentId, StoreId, WebhookDeliveryId, WebhookEndpointId } from "../../domain/Ids.ts"
import { MAX_LIST_LIMIT } from "../../domain/Lists.ts"
import {
  type CreateWebhookEndpoint,
  DeletedWebhookEndpoint,
  type UpdateWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEvent
} from "../../domain/Webhooks.ts"
import { AppConfig } from "../platform/Config.ts"
import { AccessService, type StoreAccess, storeData } from "../access/Service.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { newId } from "../platform/Ids.ts"
import { decodeCursor, type ListParams, toPage } from "../platform/Pagination.ts"
import { currentDate } from "../platform/Time.ts"
import { checkDestination, WebhookResolver } from "./Destination.ts"
import { type DeliveryRow, type EndpointRow, WebhooksRepo } from "./Repo.ts"
import { EventFeedService } from "./EventFeed.ts"
import { newSigningSecret } from "./Signing.ts"
import { traced } from "../platform/Traced.ts"

/** How long a rotated-away secret keeps signing (API.md "Webhooks"). */
export const SECRET_OVERLAP_MILLIS = 24 * 60 * 60 * 1000

const viewFields = (row: EndpointRow) => ({
  id: row.id,
  object: "webhook_endpoint" as const,
  store_id: row.store_id,
  url: row.url,
  events: row.events,
  enabled: row.enabled,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

const toEndpoint = (row: EndpointRow) => new WebhookEndpoint(viewFields(row))

const toDelivery = (row: DeliveryRow) =>
  new WebhookDelivery({
    id: row.id,
    object: "webhook_delivery",
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error: row.error,
    created_at: row.created_at.toISOString()
  })

/** A queued body as the answer shows it: the event that will be delivered. */
const toEvent = Schema.decodeUnknownSync(Schema.parseJson(WebhookEvent))

/** A list that names `*` among other types is stored as just `*`. */
const normalizeEvents = (events: ReadonlyArray<string>) => (events.includes("*") ? ["*"] : [...events])

export class WebhooksService extends Effect.Service<WebhooksService>()("webhooks/WebhooksService", {
  effect: Effect.gen(function*() {
    const repo = storeData(yield* WebhooksRepo)
    const access = yield* AccessService
    const box = yield* SecretBox
    const config = yield* AppConfig
    const resolve = yield* WebhookResolver
    const events = yield* EventFeedService

    const endpointNotFound = (id: WebhookEndpointId) => new NotFound({ message: `No such webhook endpoint: ${id}`, param: "id" })

    /**
     * Endpoints are managed from a user session only, like API keys: an endpoint receives the events of
     * both modes, so a (test) API key must not be able to point live events somewhere or read the
     * secret that signs them.
     */
    const storeFor = <A, E, R>(storeId: StoreId, permission: Permission, use: (store: StoreAccess) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(access.currentUser, access.withStore(storeId, permission, use))

    /** The endpoint `id` if the signed-in user may do `permission` on its store; another tenant's is 404. */
    const accessibleEndpoint = <A, E, R>(id: WebhookEndpointId, permission: Permission, use: (found: EndpointRow) => Effect.Effect<A, E, R>) =>
      Effect.zipRight(
        access.currentUser,
        access.withOwned(repo.findEndpoint(id), (endpoint) => endpoint.store_id, permission, () => endpointNotFound(id), use)
      )

    const requireAllowedUrl = (url: string) =>
      Effect.gen(function*() {
        const check = yield* checkDestination(url, config.webhookAllowPrivateNetworks, resolve)
        if (check._tag === "Refused") return yield* new InvalidRequest({ message: `url ${check.reason}`, param: "url" })
      })

    const withSecret = (row: EndpointRow, secret: string) => new WebhookEndpointWithSecret({ ...viewFields(row), secret })

    const create = traced("Webhooks.create")(function*(input: CreateWebhookEndpoint) {
      return yield* storeFor(input.store_id, "webhook.manage", (store) =>
        Effect.gen(function*() {
          yield* requireAllowedUrl(input.url)
          const secret = newSigningSecret()
          const row = yield* repo.insertEndpoint({
            id: newId("we"),
            storeId: store.storeId,
            url: input.url,
            events: normalizeEvents(input.events),
            enabled: input.enabled ?? true,
            secretSealed: yield* box.seal(secret)
          })
          return withSecret(row, secret)
        }))
    })

    const list = traced("Webhooks.list")(function*(storeId: StoreId, params: ListParams) {
      return yield* storeFor(storeId, "webhook.read", (store) =>
        Effect.gen(function*() {
          const after = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          const rows = yield* repo.listEndpoints(store.storeId, params.limit, after)
          const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
          return { ...page, data: page.data.map(toEndpoint) }
        }))
    })

    const update = traced("Webhooks.update")(function*(id: WebhookEndpointId, changes: UpdateWebhookEndpoint) {
      return yield* accessibleEndpoint(id, "webhook.manage", () =>
        Effect.gen(function*() {
          if (changes.url !== undefined) yield* requireAllowedUrl(changes.url)
          const updated = yield* repo.updateEndpoint(id, {
            url: changes.url,
            events: changes.events === undefined ? undefined : normalizeEvents(changes.events),
            enabled: changes.enabled
          }, yield* currentDate)
          if (Option.isNone(updated)) return yield* endpointNotFound(id)
          return toEndpoint(updated.value)
        }))
    })

    const remove = traced("Webhooks.delete")(function*(id: WebhookEndpointId) {
      return yield* accessibleEndpoint(id, "webhook.manage", () =>
        Effect.gen(function*() {
          if (!(yield* repo.deleteEndpoint(id))) return yield* endpointNotFound(id)
          return new DeletedWebhookEndpoint({ id, object: "webhook_endpoint", deleted: true })
        }))
    })

    const revealSecret = traced("Webhooks.revealSecret")(function*(id: WebhookEndpointId) {
      return yield* accessibleEndpoint(id, "webhook.manage", (endpoint) =>
        Effect.gen(function*() {
          const sealed = yield* repo.activeSecret(id)
          if (Option.isNone(sealed)) return yield* endpointNotFound(id)
          return withSecret(endpoint, yield* box.open(sealed.value))
        }))
    })

    const rotateSecret = traced("Webhooks.rotateSecret")(function*(id: WebhookEndpointId) {
      return yield* accessibleEndpoint(id, "webhook.manage", () =>
        Effect.gen(function*() {
          const secret = newSigningSecret()
          const rotated = yield* repo.rotateSecret(id, yield* box.seal(secret), SECRET_OVERLAP_MILLIS, yield* currentDate)
          if (Option.isNone(rotated)) return yield* endpointNotFound(id)
          return withSecret(rotated.value, secret)
        }))
    })

    const deliveries = traced("Webhooks.deliveries")(function*(id: WebhookEndpointId, params: ListParams) {
      return yield* accessibleEndpoint(id, "webhook.read", () =>
        Effect.gen(function*() {
          const after = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
          const rows = yield* repo.listDeliveries(id, params.limit, after)
          const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: row.id }))
          return { ...page, data: page.data.map(toDelivery) }
        }))
    })

    /** The deliveries of the events about one payment of a store (its own and its refunds'), newest first. */
    const deliveriesOfPayment = traced("Webhooks.deliveriesOfPayment")(function*(storeId: StoreId, paymentId: PaymentId) {
      return yield* storeFor(storeId, "webhook.read", () =>
        Effect.map(repo.deliveriesOfPayment(storeId, paymentId, MAX_LIST_LIMIT), (rows) => rows.map(toDelivery)))
    })

    const requireEnabled = (endpoint: EndpointRow) =>
      endpoint.enabled
        ? Effect.void
        : Effect.fail(new InvalidState({ message: `Webhook endpoint ${endpoint.id} is disabled; enable it first`, param: "id" }))

    const sendTest = traced("Webhooks.sendTest")(function*(id: WebhookEndpointId) {
      return yield* accessibleEndpoint(id, "webhook.manage", (endpoint) =>
        Effect.gen(function*() {
          yield* requireEnabled(endpoint)
          const eventId = newId("evt")
          const now = yield* currentDate
          const body = JSON.stringify({
            id: eventId,
            object: "event",
            type: "test.event",
            created_at: now.toISOString(),
            livemode: false,
            data: {
              object: {
                object: "test",
                endpoint_id: endpoint.id,
                store_id: endpoint.store_id,
                message: "A test event sent from the webhook endpoint's test route."
              }
            }
          })
          return toEvent(yield* repo.enqueue({ endpointId: endpoint.id, eventId, eventType: "test.event", body }, now))
        }))
    })

    const resend = traced("Webhooks.resend")(function*(deliveryId: WebhookDeliveryId) {
      const deliveryNotFound = () =>
        new NotFound({ message: `No such webhook delivery: ${deliveryId}`, param: "deliveryId" })
      yield* access.currentUser
      // A delivery belongs to the store of its endpoint.
      const endpointOfDelivery = Effect.flatMap(
        repo.findDelivery(deliveryId),
        Option.match({ onNone: () => Effect.succeedNone, onSome: (delivery) => repo.findEndpoint(delivery.endpoint_id) })
      )
      return yield* access.withOwned(
        endpointOfDelivery,
        (endpoint) => endpoint.store_id,
        "webhook.manage",
        deliveryNotFound,
        (endpoint) =>
          Effect.gen(function*() {
            yield* requireEnabled(endpoint)
            const body = yield* repo.enqueueAgain(deliveryId, yield* currentDate)
            if (Option.isNone(body)) return yield* deliveryNotFound()
            return toEvent(body.value)
          })
      )
    })

    return {
      create,
      list,
      update,
      remove,
      revealSecret,
      rotateSecret,
      deliveries,
      deliveriesOfPayment,
      sendTest,
      resend,
      /** A store's events as they are written (EventFeed.ts), for `khqr listen`. */
      eventFeed: events.feed
    } as const
  }),
  dependencies: [WebhooksRepo.Default, AccessService.Default, SecretBox.Default, EventFeedService.Default]
}) {}
