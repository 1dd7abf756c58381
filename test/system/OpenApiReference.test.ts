/**
 * The served OpenAPI document as a reference a developer can work from: every operation summarized and
 * described, with request and response examples, the spec's DTOs as named schemas, the HTTP layer's
 * own answers (405, 413, 415, 500) documented, the webhooks section, the hosted pages' HTML variant,
 * and none of the generator's constraint wording in descriptions. The examples are real: the payment
 * example is accepted as it stands.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { WebhookEventTypes } from "../../domain/Webhooks.ts"
import { createStore, signUp } from "../support/Accounts.ts"
import { makeCall } from "../support/Http.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const call = makeCall()

const SPEC_DTOS = [
  "RegisterDto",
  "LoginDto",
  "ForgotPasswordDto",
  "ResetPasswordDto",
  "ChangePasswordDto",
  "MfaCodeDto",
  "CreateStoreDto",
  "UpdateBrandingDto",
  "UpsertCredentialDto",
  "ActivateLiveDto",
  "SubmitVerificationDto",
  "RejectDto",
  "CreateBranchDto",
  "UpdateBranchDto",
  "CreateApiKeyDto",
  "CreateWebhookDto",
  "UpdateWebhookDto",
  "CreatePaymentDto",
  "CreateRefundDto",
  "SimulateDto",
  "SetSettingDto",
  "CheckDto",
  "CreateLinkDto",
  "UpdateLinkDto",
  "PayLinkDto",
  "CreateCustomerDto",
  "SetPreferencesDto",
  "UpdateProgramDto",
  "CreateTierDto",
  "UpdateTierDto",
  "CreateRewardDto",
  "UpdateRewardDto",
  "RedeemRewardDto",
  "ApiRedeemDto",
  "AdjustDto"
]

const operationsOf = (document: any) =>
  Object.entries<any>(document.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation }))
  )

/** Every string under `key` anywhere in the document. */
const stringsUnder = (node: any, key: string): Array<string> => {
  if (Array.isArray(node)) return node.flatMap((child) => stringsUnder(child, key))
  if (typeof node !== "object" || node === null) return []
  return Object.entries(node).flatMap(([name, value]) =>
    name === key && typeof value === "string" ? [value] : stringsUnder(value, key)
  )
}

describe("the OpenAPI document", () => {
  layer(testAppLayer(), { timeout: 120_000, excludeTestServices: true })("served at /openapi.json", (it) => {
    const documentOf = Effect.gen(function*() {
      const { fetch } = yield* TestApp
      return yield* Effect.promise(() => fetch("/openapi.json").then((response) => response.json() as Promise<any>))
    })

    it.effect("summarizes and describes every operation, with examples of its bodies", () =>
      Effect.gen(function*() {
        const document = yield* documentOf
        for (const { name, operation } of operationsOf(document)) {
          expect(operation.summary, name).toEqual(expect.any(String))
          expect(operation.description, name).toEqual(expect.any(String))
          const request = operation.requestBody?.content?.["application/json"]
          if (request !== undefined) expect(request.example, name).toBeDefined()
          for (const [status, response] of Object.entries<any>(operation.responses)) {
            const json = response.content?.["application/json"]
            if (json !== undefined) expect(json.example, `${name} ${status}`).toBeDefined()
          }
        }
      }))

    it.effect("documents 405, 413, 415 and 500 on every operation, in the shared envelope", () =>
      Effect.gen(function*() {
        const document = yield* documentOf
        for (const { name, operation } of operationsOf(document)) {
          for (const status of ["405", "413", "415", "500"]) {
            expect(operation.responses[status], `${name} ${status}`).toBeDefined()
          }
        }
        expect(document.paths["/v1/payments"].post.responses["413"].content["application/json"].example.error.code)
          .toBe("payload_too_large")
      }))

    it.effect("names the spec's DTOs as schemas", () =>
      Effect.gen(function*() {
        const document = yield* documentOf
        for (const dto of SPEC_DTOS) expect(document.components.schemas[dto], dto).toBeDefined()
        expect(document.paths["/auth/login"].post.requestBody.content["application/json"].schema.$ref)
          .toBe("#/components/schemas/LoginDto")
        expect(document.components.schemas.CreatePaymentDto.additionalProperties).toBe(false)
      }))

    it.effect("has a webhooks section: every event, its payload and the signature headers", () =>
      Effect.gen(function*() {
        const document = yield* documentOf
        expect(Object.keys(document.webhooks).sort()).toEqual([...WebhookEventTypes].sort())
        for (const type of WebhookEventTypes) {
          const delivery = document.webhooks[type].post
          expect(delivery.summary).toContain(type)
          expect(delivery.parameters.map((header: any) => header.name)).toEqual([
            "webhook-id",
            "webhook-timestamp",
            "webhook-signature"
          ])
          const payload = delivery.requestBody.content["application/json"]
          expect(payload.example).toMatchObject({ object: "event", type, livemode: false })
          if (type.startsWith("payment.")) {
            expect(payload.schema.properties.data.properties.object.$ref).toBe("#/components/schemas/Payment")
            expect(payload.example.data.object.object).toBe("payment")
          }
          if (type === "loyalty.points_earned") {
            expect(payload.schema.properties.data.properties.object.$ref).toBe("#/components/schemas/PointsEntry")
            expect(payload.example.data.object.object).toBe("points_entry")
          }
          if (type.startsWith("loyalty.redemption.")) {
            expect(payload.schema.properties.data.properties.object.$ref).toBe("#/components/schemas/Redemption")
            expect(payload.example.data.object.object).toBe("redemption")
          }
        }
      }))

    it.effect("shows the HTML variant of the hosted pages", () =>
      Effect.gen(function*() {
        const document = yield* documentOf
        for (const path of ["/checkout/{id}", "/receipts/{id}", "/links/{id}"]) {
          const ok = document.paths[path].get.responses["200"]
          expect(Object.keys(ok.content).sort(), path).toEqual(["application/json", "text/html"])
        }
        expect(Object.keys(document.paths["/reset-password"].get.responses["200"].content)).toEqual(["text/html"])
      }))

    it.effect("has no generated constraint wording in descriptions or titles", () =>
      Effect.gen(function*() {
        const document = yield* documentOf
        const descriptions = stringsUnder(document, "description")
        expect(descriptions.filter((text) => /character\(s\)|item\(s\)|a string matching the pattern|^an integer$/.test(text)))
          .toEqual([])
        expect(stringsUnder(document, "title").filter((text) => /^\w+\(.*\)$/.test(text))).toEqual([])
        // The constraints themselves stay, as JSON Schema keywords.
        expect(document.components.schemas.LoginDto.properties.email.maxLength).toBe(254)
      }))

    it.effect("gives examples that are accepted as they stand", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const document = yield* documentOf
        const owner = yield* Effect.promise(() => signUp(app))
        const store = yield* Effect.promise(() => createStore(app, owner.token))
        const key = yield* call(app, "POST", "/api-keys", { token: owner.token, body: { store_id: store.id, mode: "test" } })
        const example = document.paths["/v1/payments"].post.requestBody.content["application/json"].example
        const created = yield* call(app, "POST", "/v1/payments", { token: key.body.secret, body: example })
        expect(created.status).toBe(201)
        const branding = document.paths["/stores/{id}/branding"].put.requestBody.content["application/json"].example
        expect((yield* call(app, "PUT", `/stores/${store.id}/branding`, { token: owner.token, body: branding })).status).toBe(200)
      }))
  })
})
