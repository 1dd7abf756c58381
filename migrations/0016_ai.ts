/**
 * AI usage metering: one row per model call, append-only (a usage record is a billing fact).
 *
 * Cost is kept in micro-dollars (integers), like every other amount in minor units; the report and the
 * monthly cost cap sum it per store and per feature over a time window.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE ai_usage (
      id              bigserial PRIMARY KEY,
      store_id        text NOT NULL REFERENCES stores (id),
      feature         text NOT NULL CHECK (feature IN
                        ('marketing_copy', 'campaign_suggest', 'analytics_summary', 'fraud_insights', 'assistant')),
      model           text NOT NULL CHECK (model IN ('builtin', 'openai_compatible')),
      model_name      text NOT NULL,
      input_tokens    integer NOT NULL CHECK (input_tokens >= 0),
      output_tokens   integer NOT NULL CHECK (output_tokens >= 0),
      cost_micro_usd  bigint NOT NULL CHECK (cost_micro_usd >= 0),
      latency_ms      integer NOT NULL CHECK (latency_ms >= 0),
      outcome         text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
      error           text,
      created_at      timestamptz(3) NOT NULL
    )`
  yield* sql`CREATE INDEX ai_usage_store ON ai_usage (store_id, created_at)`
  yield* sql`CREATE INDEX ai_usage_created ON ai_usage (created_at)`

  yield* sql`
    CREATE FUNCTION ai_usage_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'ai_usage is append-only';
    END $$`
  yield* sql`
    CREATE TRIGGER ai_usage_append_only BEFORE UPDATE OR DELETE ON ai_usage
      FOR EACH ROW EXECUTE FUNCTION ai_usage_append_only()`
})
