/**
 * Outgoing mail for platform administrators: the delivery record of each message, to see what is stuck
 * or was given up. Bodies are never read here.
 */
import { Effect } from "effect"
import { type MailListParams, OutgoingMail } from "../../domain/Mail.ts"
import { InvalidRequest } from "../../domain/Errors.ts"
import { AccessService } from "../access/Service.ts"
import { decodeCursor, toPage } from "../platform/Pagination.ts"
import { type MailRow, MailRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

const wireId = (id: string) => `eml_${id}`

const toMail = (row: MailRow) =>
  new OutgoingMail({
    id: wireId(row.id),
    object: "mail",
    to: row.recipient,
    subject: row.subject,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    provider_message_id: row.provider_message_id,
    next_attempt_at: row.status === "queued" ? row.next_attempt_at.toISOString() : null,
    finished_at: row.finished_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString()
  })

export class MailService extends Effect.Service<MailService>()("mail/MailService", {
  effect: Effect.gen(function*() {
    const repo = yield* MailRepo
    const access = yield* AccessService

    const list = traced("Mail.list")(function*(params: MailListParams) {
      yield* access.requirePlatformAdmin
      const position = params.cursor === undefined ? undefined : yield* decodeCursor(params.cursor)
      if (position !== undefined && !/^eml_\d{1,18}$/.test(position.id)) {
        return yield* new InvalidRequest({ message: "cursor is not valid: pass the next_cursor of the previous page unchanged", param: "cursor" })
      }
      const rows = yield* repo.list({ status: params.status, limit: params.limit, position }).pipe(Effect.orDie)
      const page = toPage(rows, params.limit, (row) => ({ createdAt: row.created_at, id: wireId(row.id) }))
      return { ...page, data: page.data.map(toMail) }
    })

    return { list } as const
  }),
  dependencies: [MailRepo.Default, AccessService.Default]
}) {}
