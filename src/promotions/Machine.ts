/**
 * The promotion status machine (API.md "Segments and promotions"), as one table: for each action, the
 * statuses it may start from and the status it leads to. Every move not in the table is refused with 409
 * naming the current status; the repo's guarded update applies the same table in SQL, so a move that
 * raced another is refused the same way.
 */
import type { PromotionAction, PromotionStatus } from "../../domain/Promotions.ts"

export interface Transition {
  readonly from: ReadonlyArray<PromotionStatus>
  readonly to: PromotionStatus
}

export type MoveAction = Exclude<PromotionAction, "create">

export const transitions: Readonly<Record<MoveAction, Transition>> = {
  /** Editing goes back to draft: a rejected promotion must be resubmitted. */
  update: { from: ["draft", "rejected"], to: "draft" },
  submit: { from: ["draft"], to: "pending_approval" },
  approve: { from: ["pending_approval"], to: "approved" },
  reject: { from: ["pending_approval"], to: "rejected" },
  activate: { from: ["approved", "paused"], to: "active" },
  pause: { from: ["active"], to: "paused" },
  end: { from: ["active", "paused"], to: "ended" }
}

/** Statuses in which a promotion may not be deleted (it must be ended first). */
export const undeletable: ReadonlyArray<PromotionStatus> = ["active", "paused"]

export const allows = (action: MoveAction, status: PromotionStatus): boolean => transitions[action].from.includes(status)

const verbs: Readonly<Record<MoveAction, string>> = {
  update: "updated",
  submit: "submitted",
  approve: "approved",
  reject: "rejected",
  activate: "activated",
  pause: "paused",
  end: "ended"
}

/** Why the move is refused: names the current status and the statuses the move needs. */
export const refusal = (action: MoveAction, status: PromotionStatus): string =>
  `A ${status} promotion cannot be ${verbs[action]} (only from ${transitions[action].from.join(" or ")})`
