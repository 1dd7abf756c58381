/** The store settings group's handlers: each one call of the stores or verification service. */
import { Effect } from "effect"
import { ConsoleStoresRpcs } from "../../../domain/console/Stores.ts"
import { MAX_LIST_LIMIT } from "../../../domain/Lists.ts"
import { StoresService } from "../../stores/Service.ts"
import { VerificationService } from "../../verification/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleStoresLive = ConsoleStoresRpcs.toLayer(Effect.gen(function*() {
  const stores = yield* StoresService
  const verification = yield* VerificationService
  return ConsoleStoresRpcs.of({
    GetStore: ({ store_id }) => hideDefects(stores.retrieve(store_id)),
    UpdateBranding: ({ store_id, ...branding }) => hideDefects(stores.updateBranding(store_id, branding)),
    SetCredentials: ({ store_id, ...credentials }) => hideDefects(stores.setCredentials(store_id, credentials)),
    SetLiveMode: ({ live_mode, store_id }) => hideDefects(stores.setLiveMode(store_id, live_mode)),
    ListBranches: ({ cursor, store_id }) => hideDefects(stores.listBranches(store_id, { limit: MAX_LIST_LIMIT, cursor })),
    CreateBranch: ({ store_id, ...branch }) => hideDefects(stores.createBranch(store_id, branch)),
    UpdateBranch: ({ id, ...changes }) => hideDefects(stores.updateBranch(id, changes)),
    VerificationStatus: ({ organization_id }) => hideDefects(verification.status(organization_id)),
    SubmitVerification: (input) => hideDefects(verification.submit(input))
  })
}))
