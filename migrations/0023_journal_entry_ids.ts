/**
 * Journal entry ids take the prefix of the wire contract, `je_`; entries posted before were `jrn_`.
 * Every existing id is rewritten in place (the random part kept, so no two ids can meet), together with
 * the lines that point at it, so a store's journal reads with one spelling and an id seen in an export
 * keeps naming the same entry after a new prefix only.
 *
 * Journal rows are otherwise immutable: the triggers that refuse updates, and the foreign key from the
 * lines, step aside for this one transaction (migrations run in one, under the migration lock, before
 * the server listens) and are back before it commits.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE journal_entries DISABLE TRIGGER journal_entries_immutable`
  yield* sql`ALTER TABLE journal_lines DISABLE TRIGGER journal_lines_immutable`
  yield* sql`ALTER TABLE journal_lines DROP CONSTRAINT journal_lines_entry_id_fkey`
  yield* sql`UPDATE journal_entries SET id = 'je_' || substring(id FROM 5) WHERE id LIKE 'jrn\\_%'`
  yield* sql`UPDATE journal_lines SET entry_id = 'je_' || substring(entry_id FROM 5) WHERE entry_id LIKE 'jrn\\_%'`
  yield* sql`
    ALTER TABLE journal_lines ADD CONSTRAINT journal_lines_entry_id_fkey
    FOREIGN KEY (entry_id) REFERENCES journal_entries (id)`
  yield* sql`ALTER TABLE journal_lines ENABLE TRIGGER journal_lines_immutable`
  yield* sql`ALTER TABLE journal_entries ENABLE TRIGGER journal_entries_immutable`
})
