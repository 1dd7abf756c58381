/**
 * Referrals made at customer creation: a new customer created with another's `referral_code` becomes that
 * customer's referee, in the transaction that creates it. The fraud rules that can be judged now
 * (self-referral, the referrer's daily limit) flag it at once, announced by `referral.flagged`.
 */
import { Effect, Option } from "effect"
import { InvalidRequest, InvalidState } from "../../domain/Errors.ts"
import type { CustomerId, StoreId } from "../../domain/Ids.ts"
import { newId } from "../platform/Ids.ts"
import { Outbox } from "../platform/Outbox.ts"
import { addMillis, currentDate } from "../platform/Time.ts"
import { ReferralsRepo, type ReferralCustomerRow } from "./Repo.ts"
import { flagsAtCreation } from "./Rules.ts"
import { encodeReferral, toReferral } from "./View.ts"
import { traced } from "../platform/Traced.ts"

const DAY_MILLIS = 86_400_000

export class ReferralAttach extends Effect.Service<ReferralAttach>()("referrals/ReferralAttach", {
  effect: Effect.gen(function*() {
    const repo = yield* ReferralsRepo
    const outbox = yield* Outbox

    const unknownCode = (code: string) =>
      new InvalidRequest({ message: `No customer of this store has the referral code ${JSON.stringify(code)}`, param: "referral_code" })

    /**
     * The referrer of `code` in the store and mode, read before the referee is created: a code of another
     * store (or mode), or none, is 400 naming `referral_code`.
     */
    const referrerOf = traced("ReferralAttach.referrerOf")(function*(
      owner: { readonly storeId: string; readonly livemode: boolean },
      code: string
    ) {
      const found = Option.filter(
        yield* repo.findByCode(code.trim().toUpperCase()),
        (row) => row.store_id === owner.storeId && row.livemode === owner.livemode
      )
      if (Option.isNone(found)) return yield* unknownCode(code)
      return found.value
    })

    /**
     * Makes `referee` the referral of `referrer`. Call it in the transaction that creates the referee: the
     * referrer's row is locked so its referrals of the day are counted one at a time.
     */
    const attach = traced("ReferralAttach.attach")(function*(
      referrer: ReferralCustomerRow,
      referee: {
        readonly id: CustomerId
        readonly email: string | null
        readonly phone: string | null
        readonly external_id: string | null
      }
    ) {
      const locked = yield* repo.lockCustomer(referrer.id)
      if (Option.isNone(locked)) return yield* unknownCode(referrer.referral_code ?? "")
      const at = yield* currentDate
      const program = yield* repo.program(referrer.store_id as StoreId)
      const recent = yield* repo.referralsSince(referrer.id, addMillis(at, -DAY_MILLIS))
      const flags = flagsAtCreation(locked.value, referee, recent, program.max_referrals_per_day)
      const inserted = yield* repo.insertReferral({
        id: newId("ref"),
        storeId: referrer.store_id,
        livemode: referrer.livemode,
        referrerId: referrer.id,
        refereeId: referee.id,
        status: flags.length > 0 ? "flagged" : "pending",
        flags,
        at
      })
      if (Option.isNone(inserted)) {
        return yield* new InvalidState({ message: `Customer ${referee.id} already has a referrer`, param: "referral_code" })
      }
      if (flags.length > 0) {
        yield* outbox.emit({
          storeId: inserted.value.store_id,
          livemode: inserted.value.livemode,
          type: "referral.flagged",
          object: encodeReferral(toReferral(inserted.value)),
          at
        })
      }
      return inserted.value
    })

    return { referrerOf, attach } as const
  }),
  dependencies: [ReferralsRepo.Default, Outbox.Default]
}) {}
