/**
 * The one lock of a customer's row. Every change that must see the customer as it is — the customer's own
 * edits, a wallet's points, a referrer's count of the day — takes this lock first, so they are made one at a
 * time; each area reads the columns it keeps, in the same statement.
 */
import type { SqlClient, Statement } from "@effect/sql"

/**
 * The statement that reads `columns` of the customer `id` and holds its row until the transaction ends (no
 * row when there is no such customer).
 */
export const lockCustomerRow = (sql: SqlClient.SqlClient, columns: Statement.Fragment, id: string) =>
  sql`SELECT ${columns} FROM customers WHERE id = ${id} FOR UPDATE`
