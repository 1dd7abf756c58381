/**
 * The console's customer procedures: search, the customer 360, a customer made from the console, the
 * preferences with their consent log, and erasure. Each calls the service `/dashboard/customers` calls
 * (customer.read to read, customer.write to change, customer.erase to erase).
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { ConsentEventList, CreateCustomer, Customer, Customer360, CustomerList, CustomerPreferences, SetPreferences, StoreCustomerListParams } from "../Customers.ts"
import { ConsoleAuthentication } from "../Console.ts"
import { IdempotentCreateErrors } from "./Core.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { CustomerId, StoreId } from "../Ids.ts"
import { ListParams } from "../Lists.ts"
import { IdempotencyHeaders } from "../Payments.ts"

/** Test mode unless asked otherwise, so live data is only ever shown on purpose. */
export const ConsoleLivemode = Schema.optionalWith(Schema.Boolean, { default: () => false })
/** A console list's page: the list routes' `limit` (as a number) and `cursor`. */
export const ConsolePage = {
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  cursor: ListParams.fields.cursor
}
/** What a console procedure of these areas may refuse with. */
export const EngagementErrors = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)
/** An idempotent create's: a replayed answer may be any error the REST route answered. */
export const ReplayedErrors = IdempotentCreateErrors

export class ConsoleCustomerRpcs extends RpcGroup.make(
  /** A store's customers of one mode, newest first; `search` finds text in the e-mail, name, phone or external id. */
  Rpc.make("SearchCustomers", {
    payload: { store_id: StoreId, livemode: ConsoleLivemode, search: StoreCustomerListParams.fields.search, ...ConsolePage },
    success: CustomerList,
    error: EngagementErrors
  }),
  /** Creates a customer in the store and mode, as `POST /v1/customers` does; `idempotency_key` as its header. */
  Rpc.make("CreateCustomer", {
    payload: {
      store_id: StoreId,
      livemode: ConsoleLivemode,
      ...CreateCustomer.fields,
      idempotency_key: IdempotencyHeaders.fields["idempotency-key"]
    },
    success: Customer,
    error: ReplayedErrors
  }),
  /** The customer 360: profile, points and tier, metrics per currency, recent payments. */
  Rpc.make("CustomerOverview", {
    payload: { id: CustomerId },
    success: Customer360,
    error: EngagementErrors
  }),
  /** Every preference change, newest first (who, when, source, policy version). */
  Rpc.make("CustomerConsentLog", {
    payload: { id: CustomerId, ...ConsolePage },
    success: ConsentEventList,
    error: EngagementErrors
  }),
  /** Whether the customer may be contacted by e-mail, SMS and Telegram, and receive marketing. */
  Rpc.make("CustomerPreferences", {
    payload: { id: CustomerId },
    success: CustomerPreferences,
    error: EngagementErrors
  }),
  /** Changes preferences as the signed-in user (source `dashboard` unless sent); each change is a consent event. */
  Rpc.make("SetCustomerPreferences", {
    payload: { id: CustomerId, ...SetPreferences.fields },
    success: CustomerPreferences,
    error: EngagementErrors
  }),
  /** Erases the customer's personal data; payments, refunds and the ledger stay (customer.erase). */
  Rpc.make("EraseCustomer", {
    payload: { id: CustomerId },
    success: Customer,
    error: EngagementErrors
  })
).middleware(ConsoleAuthentication) {}
