/**
 * The business services every HTTP handler, RPC handler and entity may use. A service layer brings
 * its own repos; what it needs from the outside (SQL client, sharding, master key, configuration) is
 * provided by the runtime.
 */
import { Layer } from "effect"
import { AccessService } from "../src/access/Service.ts"
import { AccountsService } from "../src/accounts/Service.ts"
import { ApiKeysRepo } from "../src/apikeys/Repo.ts"
import { SystemService } from "../src/system/Service.ts"

export const ServicesLive = Layer.mergeAll(
  SystemService.Default,
  AccessService.Default,
  AccountsService.Default,
  ApiKeysRepo.Default
)
