/**
 * The reads other areas make of verifications (an organization's KYC). The verification area owns the table;
 * the platform's security posture counts the live stores of organizations without an approved one, reading
 * stores and verifications in one statement, so this area exports the relation of its rows and that statement
 * joins it. The database pulls the relation into the enclosing query, so the plan is the one a join of the
 * table would have.
 */
import type { SqlClient, Statement } from "@effect/sql"

/** The organizations with an approved verification (`organization_id`, once per verification). */
export const approvedOrganizations = (sql: SqlClient.SqlClient): Statement.Fragment =>
  sql`SELECT organization_id FROM verifications WHERE status = 'approved'`
