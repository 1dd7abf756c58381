/**
 * Payment links and invoices, and which payments were started through each.
 *
 * A link through which payments were made is never deleted (its payments point at it): "deleting" it
 * sets `deleted_at`, which hides it from lists and from the public. A link without payments is deleted.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE payment_links (
      id              text PRIMARY KEY,
      kind            text NOT NULL CHECK (kind IN ('link', 'invoice')),
      store_id        text NOT NULL REFERENCES stores (id),
      livemode        boolean NOT NULL,
      title           text NOT NULL,
      description     text,
      amount          bigint CHECK (amount > 0),
      min_amount      bigint CHECK (min_amount > 0),
      max_amount      bigint CHECK (max_amount > 0),
      currency        text NOT NULL CHECK (currency IN ('USD', 'KHR')),
      active          boolean NOT NULL DEFAULT true,
      reference_id    text,
      customer_email  text,
      due_date        date,
      expires_at      timestamptz(3),
      deleted_at      timestamptz(3),
      created_at      timestamptz(3) NOT NULL DEFAULT now(),
      updated_at      timestamptz(3) NOT NULL DEFAULT now(),
      CHECK (kind = 'link' OR amount IS NOT NULL),
      CHECK (amount IS NULL OR (min_amount IS NULL AND max_amount IS NULL)),
      CHECK (min_amount IS NULL OR max_amount IS NULL OR min_amount <= max_amount)
    )`
  yield* sql`
    CREATE INDEX payment_links_list ON payment_links (store_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`

  yield* sql`
    CREATE TABLE link_payments (
      payment_id  text PRIMARY KEY REFERENCES payments (id),
      link_id     text NOT NULL REFERENCES payment_links (id),
      created_at  timestamptz(3) NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX link_payments_link ON link_payments (link_id)`
})
