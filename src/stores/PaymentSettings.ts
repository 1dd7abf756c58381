/**
 * What the payments engine reads of a store on every payment it creates: the provider credentials
 * (opened) and whether the store is in live mode. Kept in each process for a few seconds and dropped
 * everywhere when the merchant changes either (src/platform/NotifiedCache.ts), so creating a payment
 * does not spend a database round trip and a decryption on settings that rarely change.
 */
import { Effect, Option, Schema } from "effect"
import type { StoreId } from "../../domain/Ids.ts"
import { ProviderCredentials } from "../../domain/Stores.ts"
import { ChangeFeed } from "../platform/ChangeFeed.ts"
import { SecretBox } from "../platform/Crypto.ts"
import { makeNotifiedCache } from "../platform/NotifiedCache.ts"
import { STORE_PAYMENT_SETTINGS, StoresRepo } from "./Repo.ts"
import { traced } from "../platform/Traced.ts"

export interface PaymentSettings {
  /** The provider credentials in full, decrypted; None until the merchant sets them. Never on a route. */
  readonly credentials: Option.Option<ProviderCredentials>
  readonly liveMode: boolean
}

const decodeSealedCredentials = Schema.decodeUnknown(Schema.parseJson(ProviderCredentials))

export class StorePaymentSettings extends Effect.Service<StorePaymentSettings>()("stores/StorePaymentSettings", {
  scoped: Effect.gen(function*() {
    const repo = yield* StoresRepo
    const secrets = yield* SecretBox

    const read = (storeId: StoreId) =>
      Effect.gen(function*() {
        const row = yield* repo.findPaymentSettings(storeId)
        if (Option.isNone(row)) return Option.none<PaymentSettings>()
        const sealed = row.value.credentials
        const credentials = sealed === null ? Option.none<ProviderCredentials>() : Option.some(
          // We sealed what we decoded with this schema; failing to read it back is corrupted data, a defect.
          yield* Effect.orDie(Effect.flatMap(secrets.open(sealed), decodeSealedCredentials))
        )
        return Option.some<PaymentSettings>({ credentials, liveMode: row.value.live_mode })
      })

    const cache = yield* makeNotifiedCache({
      feed: yield* ChangeFeed,
      channel: STORE_PAYMENT_SETTINGS,
      isNamedBy: (storeId, key: StoreId) => key === storeId,
      lookup: read,
      timeToLiveMillis: 10_000,
      capacity: 10_000
    })

    /** The store's payment settings; None when there is no such store. */
    const of = traced("StorePaymentSettings.of")((storeId: StoreId) => cache.get(storeId))

    /** Drops the store's settings in this process at once, after this process changed them. */
    const changed = (storeId: StoreId) => cache.invalidate(storeId)

    return { of, changed } as const
  }),
  dependencies: [StoresRepo.Default, SecretBox.Default]
}) {}
