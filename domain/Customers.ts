/**
 * Customers of a store, their communication preferences and consent log, the customer 360 of the
 * console, and erasure of a customer's personal data (API.md "Customers, consent, erasure").
 *
 * A customer belongs to one store and one mode, like the API key that creates it. The merchant API
 * (`/v1/customers`) acts with an API key on its own store and mode; the console routes
 * (`/dashboard/…`) act with a user session under the roles of the access policy.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Email } from "./Accounts.ts"
import { authenticated } from "./Auth.ts"
import {
  IdempotencyConflictResponse,
  InvalidRequestResponse,
  InvalidStateResponse,
  NotFoundResponse
} from "./Errors.ts"
import { ConsentRecordId, CustomerId, StoreId, TierId } from "./Ids.ts"
import { ListOf, ListParams } from "./Lists.ts"
import {
  IdempotencyHeaders,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE_LENGTH,
  Metadata,
  Payment
} from "./Payments.ts"
import { boundedText, PhoneNumber } from "./Stores.ts"
import { closed, MAX_EMAIL_LENGTH, MAX_NAME_LENGTH, maxText, oneOf } from "./Text.ts"

export const MAX_EXTERNAL_ID_LENGTH = 64
export const MAX_REFERRAL_CODE_LENGTH = 64
export const MAX_CONSENT_SOURCE_LENGTH = 64
export const MAX_POLICY_VERSION_LENGTH = 64
export const MAX_SEARCH_LENGTH = 200
/** How many of a customer's payments the customer 360 shows. */
export const RECENT_PAYMENTS = 10

export const ConsentPurposes = ["email", "sms", "telegram", "marketing"] as const
export const ConsentPurpose = oneOf(...ConsentPurposes).annotations({
  description: "What the customer agreed (or stopped agreeing) to be contacted by, or for: `email`, `sms`, " +
    "`telegram`, or `marketing` (offers and promotions, over any channel)."
})
export type ConsentPurpose = typeof ConsentPurpose.Type

const ExternalId = boundedText(MAX_EXTERNAL_ID_LENGTH).annotations({
  description: `Your own id of the customer (1 to ${MAX_EXTERNAL_ID_LENGTH} characters), unique in the store and mode`,
  examples: ["crm-10042"]
})

const CustomerName = boundedText(MAX_NAME_LENGTH).annotations({
  description: `The customer's name (1 to ${MAX_NAME_LENGTH} characters)`,
  examples: ["Sokha Chan"]
})

const CustomerPhone = PhoneNumber.annotations({
  description: "A phone number: digits, spaces, parentheses and dashes, optionally after a leading +",
  examples: ["+855 12 345 678"]
})

const CustomerEmail = Email.annotations({
  description: `An e-mail address (at most ${MAX_EMAIL_LENGTH} characters), unique in the store and mode ` +
    "regardless of letter case",
  examples: ["sokha@example.com"]
})

/** Free text naming where a consent was given: a label, not a sentence. */
const labelText = (max: number) =>
  boundedText(max).pipe(Schema.pattern(/^[\x21-\x7E][\x20-\x7E]*$/, { message: () => "must use printable ASCII characters only" }))

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

export class CustomerTier extends Schema.Class<CustomerTier>("CustomerTier")({
  id: TierId,
  name: Schema.String.annotations({ examples: ["Gold"] })
}) {}

const customerFields = {
  id: CustomerId,
  object: Schema.Literal("customer"),
  store_id: StoreId,
  livemode: Schema.Boolean.annotations({ description: "Whether the customer was created with a live API key" }),
  email: Schema.NullOr(Schema.String).annotations({ examples: ["sokha@example.com"] }),
  external_id: Schema.NullOr(Schema.String).annotations({ description: "Your own id of the customer", examples: ["crm-10042"] }),
  name: Schema.NullOr(Schema.String).annotations({ examples: ["Sokha Chan"] }),
  phone: Schema.NullOr(Schema.String).annotations({ examples: ["+855 12 345 678"] }),
  metadata: Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: "Your own key/value pairs; null once the customer is erased",
    examples: [{ segment: "regular" }]
  }),
  points_balance: Schema.Int.annotations({ description: "Loyalty points the customer can spend now", examples: [0] }),
  lifetime_points: Schema.Int.annotations({
    description: "Loyalty points the customer ever earned; the tier follows it",
    examples: [0]
  }),
  tier: Schema.NullOr(CustomerTier).annotations({ description: "The customer's loyalty tier, if the store has tiers" }),
  referral_code: Schema.NullOr(Schema.String).annotations({
    description: "The customer's own code to refer others, once one was made (POST /v1/customers/{id}/referral-code)",
    examples: ["SOKHA7Q2X"]
  }),
  erased_at: Schema.NullOr(Schema.String).annotations({
    description: "When the customer's personal data was erased; then email, external_id, name, phone and metadata are null",
    examples: [null]
  }),
  wallet_url: Schema.String.annotations({
    description: "The customer's public wallet: `{PUBLIC_BASE_URL}/wallet/{id}?t=…`. Give it to the customer only: its " +
      "token `t` opens the wallet and hosted play for this customer (`/play/game/{gameId}?c={id}&t=…`). The id alone " +
      "opens nothing. `POST /v1/customers/{id}/public-links/revoke` replaces the token (erasure does too): links " +
      "handed out before stop working",
    examples: ["https://pay.example.com/wallet/cus_3kTMd92JxQeLp0aZ7yNcB1vW?t=q0Zp3H7vX2mKc9Rf4TtW8yLb6NsAe1Ud"]
  }),
  created_at: Schema.String,
  updated_at: Schema.String
}

export class Customer extends Schema.Class<Customer>("Customer")(customerFields) {}

/** The answer of an erasure, documented with an erased customer. */
const ErasedCustomer = Customer.annotations({
  identifier: "ErasedCustomer",
  description: "A customer after erasure: its personal data null, `erased_at` set",
  examples: [
    new Customer({
      id: CustomerId.make("cus_3kTMd92JxQeLp0aZ7yNcB1vW"),
      object: "customer",
      store_id: StoreId.make("str_3kTMd92JxQeLp0aZ7yNcB1vW"),
      livemode: false,
      email: null,
      external_id: null,
      name: null,
      phone: null,
      metadata: null,
      points_balance: 0,
      lifetime_points: 0,
      tier: null,
      referral_code: null,
      erased_at: "2030-02-01T09:30:00.000Z",
      wallet_url: "https://pay.example.com/wallet/cus_3kTMd92JxQeLp0aZ7yNcB1vW?t=Vb1Xq8Lm4Kz0Tn6Rw2Ys9Pd3Hc5Jf7Ga",
      created_at: "2030-01-31T17:00:00.000Z",
      updated_at: "2030-02-01T09:30:00.000Z"
    })
  ]
})

export class CustomerList extends Schema.Class<CustomerList>("CustomerList")(ListOf(Customer).fields) {}

export class CustomerPreferences extends Schema.Class<CustomerPreferences>("CustomerPreferences")({
  object: Schema.Literal("customer_preferences"),
  customer_id: CustomerId,
  email: Schema.Boolean.annotations({ description: "May be contacted by e-mail" }),
  sms: Schema.Boolean.annotations({ description: "May be contacted by SMS" }),
  telegram: Schema.Boolean.annotations({ description: "May be contacted on Telegram" }),
  marketing: Schema.Boolean.annotations({ description: "May receive offers and promotions" }),
  updated_at: Schema.String.annotations({
    description: "When a preference last changed (the customer's creation while none has)"
  })
}) {}

export const ConsentActorType = Schema.Literal("api_key", "user")
export type ConsentActorType = typeof ConsentActorType.Type

export class ConsentActor extends Schema.Class<ConsentActor>("ConsentActor")({
  type: ConsentActorType.annotations({ description: "`api_key`: the merchant API; `user`: a console user" }),
  id: Schema.String.annotations({
    description: "The API key (`key_…`) or user (`usr_…`) that made the change",
    examples: ["key_3kTMd92JxQeLp0aZ7yNcB1vW"]
  })
}) {}

export class ConsentEvent extends Schema.Class<ConsentEvent>("ConsentEvent")({
  id: ConsentRecordId,
  object: Schema.Literal("consent_event"),
  customer_id: CustomerId,
  purpose: ConsentPurpose,
  granted: Schema.Boolean.annotations({ description: "true: consent given; false: consent withdrawn" }),
  source: Schema.NullOr(Schema.String).annotations({
    description: "Where the change was made: the `source` sent, else `api` (merchant API), `dashboard` (console) " +
      "or `erasure`; null once the customer is erased",
    examples: ["checkout"]
  }),
  policy_version: Schema.NullOr(Schema.String).annotations({
    description: "The version of the privacy policy the customer agreed to, as sent; null once the customer is erased",
    examples: ["2030-01"]
  }),
  actor: ConsentActor,
  created_at: Schema.String
}) {}

export class ConsentEventList extends Schema.Class<ConsentEventList>("ConsentEventList")(ListOf(ConsentEvent).fields) {}

/** Amounts per currency, as decimal strings. */
export const AmountsByCurrency = Schema.Struct({ USD: Schema.String, KHR: Schema.String })

export class CustomerMetrics extends Schema.Class<CustomerMetrics>("CustomerMetrics")({
  payments_count: Schema.Int.annotations({
    description: "How many of the customer's payments were paid (refunded ones included)",
    examples: [3]
  }),
  lifetime_value: AmountsByCurrency.annotations({
    description: "What the customer's paid payments brought in, net of refunds, per currency",
    examples: [{ USD: "115.50", KHR: "40000" }]
  }),
  refunded: AmountsByCurrency.annotations({
    description: "What was refunded of the customer's payments, per currency",
    examples: [{ USD: "10.00", KHR: "0" }]
  }),
  first_payment_at: Schema.NullOr(Schema.String).annotations({ description: "When the customer's first payment was paid" }),
  last_payment_at: Schema.NullOr(Schema.String).annotations({ description: "When the customer's latest payment was paid" })
}) {}

export class Customer360 extends Schema.Class<Customer360>("Customer360")({
  ...customerFields,
  metrics: CustomerMetrics,
  recent_payments: Schema.Array(Payment).annotations({
    description: `The customer's ${RECENT_PAYMENTS} newest payments, whatever their status, newest first`
  })
}) {}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

export const CreateCustomer = closed(Schema.Struct({
  email: Schema.optional(CustomerEmail),
  external_id: Schema.optional(ExternalId),
  name: Schema.optional(CustomerName),
  phone: Schema.optional(CustomerPhone),
  metadata: Schema.optional(Metadata.annotations({
    description: `Your own key/value pairs (at most ${MAX_METADATA_KEYS} keys of at most ${MAX_METADATA_KEY_LENGTH} ` +
      `characters, string values of at most ${MAX_METADATA_VALUE_LENGTH} characters); erased with the customer's ` +
      "personal data, so keep no payment records in it"
  })),
  referral_code: Schema.optional(boundedText(MAX_REFERRAL_CODE_LENGTH).annotations({
    description: "The referral code of the customer who referred this one (POST /v1/customers/{id}/referral-code): the " +
      "new customer becomes its referee. A code no customer of this store and mode has is 400 `invalid_request`"
  }))
}), "CreateCustomerDto")
export type CreateCustomer = typeof CreateCustomer.Type

export const SetPreferences = closed(Schema.Struct({
  email: Schema.optional(Schema.Boolean),
  sms: Schema.optional(Schema.Boolean),
  telegram: Schema.optional(Schema.Boolean),
  marketing: Schema.optional(Schema.Boolean),
  source: Schema.optional(labelText(MAX_CONSENT_SOURCE_LENGTH).annotations({
    description: "Where the customer gave or withdrew consent, such as `checkout`, `pos` or `import` " +
      `(at most ${MAX_CONSENT_SOURCE_LENGTH} characters); kept on each consent event`,
    examples: ["checkout"]
  })),
  policy_version: Schema.optional(labelText(MAX_POLICY_VERSION_LENGTH).annotations({
    description: "The version of your privacy policy the customer saw; kept on each consent event",
    examples: ["2030-01"]
  }))
}), "SetPreferencesDto")
export type SetPreferences = typeof SetPreferences.Type

export const CustomerListParams = Schema.Struct({
  ...ListParams.fields,
  email: Schema.optional(maxText(MAX_EMAIL_LENGTH).annotations({
    description: "Only the customer with this e-mail address (letter case does not matter)"
  })),
  external_id: Schema.optional(maxText(MAX_EXTERNAL_ID_LENGTH).annotations({
    description: "Only the customer with this external_id"
  }))
})
export type CustomerListParams = typeof CustomerListParams.Type

export const StoreCustomerListParams = Schema.Struct({
  ...ListParams.fields,
  search: Schema.optional(maxText(MAX_SEARCH_LENGTH).annotations({
    description: "Text to find anywhere in the e-mail, name, phone (with or without spaces and dashes) or " +
      "external_id, whatever the letter case"
  })),
  livemode: Schema.optional(
    Schema.BooleanFromString.annotations({
      message: () => ({ message: "must be \"true\" or \"false\"", override: true }),
      description: "`true` lists live customers; default: test customers"
    })
  )
})
export type StoreCustomerListParams = typeof StoreCustomerListParams.Type

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

const CustomerPath = Schema.Struct({ id: CustomerId })

/** `PUT …/preferences`, on the merchant API and in the console alike; `description` says who acts. */
const setPreferencesEndpoint = (path: HttpApiEndpoint.PathSegment, description: string) =>
  HttpApiEndpoint.put("setPreferences", path)
    .setPath(CustomerPath)
    .setPayload(SetPreferences)
    .addSuccess(CustomerPreferences)
    .annotate(OpenApi.Summary, "Update preferences; records consent")
    .annotate(OpenApi.Description, description)

/** `POST …/public-links/revoke`, on the merchant API and in the console alike; `who` says who may. */
const revokeLinksEndpoint = (path: HttpApiEndpoint.PathSegment, who: string) =>
  HttpApiEndpoint.post("revokePublicLinks", path)
    .setPath(CustomerPath)
    .addSuccess(Customer)
    .annotate(OpenApi.Summary, "Revoke the customer's public links")
    .annotate(
      OpenApi.Description,
      "Replaces the customer's public token: the wallet and hosted-play links handed out before, and the " +
        "`card_url` of its scratch cards and plays, stop working at once (404, as for an unknown id). Answers the " +
        "customer with its new `wallet_url` (the plays' new `card_url` are on `GET /v1/customers/{id}/plays`). " +
        `Erasure revokes them too. ${who}`
    )

const ERASED_LISTS = "Erased customers are not listed and no filter finds them; retrieve them by id."

export class CustomersGroup extends HttpApiGroup.make("customers")
  .add(
    HttpApiEndpoint.post("create", "/v1/customers")
      .setPayload(CreateCustomer)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Customer, { status: 201 })
      .addError(IdempotencyConflictResponse)
      .annotate(OpenApi.Summary, "Create a customer")
      .annotate(
        OpenApi.Description,
        "Needs an API key; the customer belongs to the key's store and mode. Send `email` or `external_id` " +
          "(or both): each is unique among the store's customers of that mode, and a duplicate is 409 " +
          "`invalid_state` naming the existing customer. The same e-mail in another store or mode is another " +
          "customer. Preferences start all false. With `Idempotency-Key`, a retry with the same body answers " +
          "the original customer and creates nothing. `referral_code` names the referrer; a code no customer " +
          "of the store has is 400 `invalid_request`; a referral whose referee shares the referrer's e-mail, phone " +
          "or external_id, or past the referrer's daily limit, is made flagged for review."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/customers")
      .setUrlParams(CustomerListParams)
      .addSuccess(CustomerList)
      .annotate(OpenApi.Summary, "List customers, newest first")
      .annotate(
        OpenApi.Description,
        "The customers of the API key's store and mode, newest first, a page at a time (`limit`, `cursor`). " +
          `Filters: \`email\` (any letter case), \`external_id\`. ${ERASED_LISTS}`
      )
  )
  .add(
    HttpApiEndpoint.get("retrieve", "/v1/customers/:id")
      .setPath(CustomerPath)
      .addSuccess(Customer)
      .annotate(OpenApi.Summary, "Retrieve a customer")
      .annotate(
        OpenApi.Description,
        "A customer of the API key's store and mode; any other id (another store's, the other mode's) is 404. " +
          "An erased customer is answered with its personal data null and `erased_at` set."
      )
  )
  .add(
    HttpApiEndpoint.get("preferences", "/v1/customers/:id/preferences")
      .setPath(CustomerPath)
      .addSuccess(CustomerPreferences)
      .annotate(OpenApi.Summary, "Communication preferences")
      .annotate(OpenApi.Description, "Whether the customer may be contacted by e-mail, SMS and Telegram, and receive marketing.")
  )
  .add(
    setPreferencesEndpoint(
      "/v1/customers/:id/preferences",
      "Send any of `email`, `sms`, `telegram`, `marketing` (at least one); the others stay. Each flag that " +
        "changes is one consent event naming this API key, `source` (default `api`) and `policy_version`; " +
        "a flag sent with its current value records nothing. An erased customer's preferences cannot be " +
        "changed (409 `invalid_state`)."
    )
  )
  .add(revokeLinksEndpoint("/v1/customers/:id/public-links/revoke", "Needs an API key of the customer's store and mode."))
    .pipe(authenticated("apiKey"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Customers")
  .annotate(OpenApi.Description, "A store's customers through the merchant API, and their contact preferences and consent.")
{}

const ROLES = "Needs a user session; Owner, Admin, Developer and Analyst may read (customer.read)."

export class CustomerConsoleGroup extends HttpApiGroup.make("customerConsole")
  .add(
    HttpApiEndpoint.get("list", "/dashboard/stores/:storeId/customers")
      .setPath(Schema.Struct({ storeId: StoreId }))
      .setUrlParams(StoreCustomerListParams)
      .addSuccess(CustomerList)
      .annotate(OpenApi.Summary, "List or search a store's customers")
      .annotate(
        OpenApi.Description,
        "Newest first, a page at a time (`limit`, `cursor`), test customers unless `livemode=true`. " +
          "`search` finds text anywhere in the e-mail, name, phone or external_id, in any letter case. " +
          `${ERASED_LISTS} ${ROLES}`
      )
  )
  .add(
    HttpApiEndpoint.get("retrieve", "/dashboard/customers/:id")
      .setPath(CustomerPath)
      .addSuccess(Customer360)
      .annotate(OpenApi.Summary, "Customer 360: profile, lifetime metrics, recent payments")
      .annotate(
        OpenApi.Description,
        "The customer with `metrics` — paid payments, lifetime value net of refunds and refunds per currency, " +
          `first and latest payment — and its ${RECENT_PAYMENTS} newest payments. An erased customer keeps its ` +
          `figures and payments. ${ROLES}`
      )
  )
  .add(
    setPreferencesEndpoint(
      "/dashboard/customers/:id/preferences",
      "As PUT /v1/customers/{id}/preferences, with the signed-in user as the consent events' actor and " +
        "`dashboard` as the default source. Needs customer.write (Owner, Admin)."
    )
  )
  .add(revokeLinksEndpoint("/dashboard/customers/:id/public-links/revoke", "Needs customer.write (Owner, Admin)."))
  .add(
    HttpApiEndpoint.get("consentLog", "/dashboard/customers/:id/consent-log")
      .setPath(CustomerPath)
      .setUrlParams(ListParams)
      .addSuccess(ConsentEventList)
      .annotate(OpenApi.Summary, "Consent change history")
      .annotate(
        OpenApi.Description,
        "Every preference change, newest first: purpose, granted or withdrawn, source, policy version, who made " +
          `it and when. The log is append-only; erasure keeps each event but clears its source and policy version. ${ROLES}`
      )
  )
  .add(
    HttpApiEndpoint.del("erase", "/dashboard/customers/:id/pii")
      .setPath(CustomerPath)
      .addSuccess(ErasedCustomer)
      .annotate(OpenApi.Summary, "Right to erasure: anonymize personal data, keep financial records")
      .annotate(
        OpenApi.Description,
        "In one transaction: email, external_id, name, phone and metadata become null, `erased_at` is set, " +
          "every preference is withdrawn (a consent event with source `erasure` for each one that was given), " +
          "the consent log's sources and policy versions are cleared, and the customer's public links (wallet, hosted " +
          "play, scratch cards) are revoked. Payments, refunds and the ledger " +
          "stay as they were. The customer is no longer listed or found by search, e-mail or external_id, and " +
          "its e-mail and external_id are free for a new customer. Erasing again answers the erased customer " +
          "and changes nothing. Needs customer.erase (Owner, Admin)."
      )
  )
  .pipe(authenticated("session"))
  .addError(NotFoundResponse)
  .addError(InvalidRequestResponse)
  .addError(InvalidStateResponse)
  .annotate(OpenApi.Title, "Customers (console)")
  .annotate(OpenApi.Description, "Customer search, detail, consent log and erasure of personal data, from the console.")
{}
