/** The Team group's handlers: each one call of the accounts service, which checks the role. */
import { Effect } from "effect"
import { ConsoleTeamRpcs } from "../../../domain/console/Team.ts"
import { MAX_LIST_LIMIT } from "../../../domain/Lists.ts"
import { AccountsService } from "../../accounts/Service.ts"
import { hideDefects } from "./Defects.ts"

export const ConsoleTeamLive = ConsoleTeamRpcs.toLayer(Effect.gen(function*() {
  const accounts = yield* AccountsService
  return ConsoleTeamRpcs.of({
    ListMembers: ({ cursor, organization_id }) => hideDefects(accounts.listMembers(organization_id, { limit: MAX_LIST_LIMIT, cursor })),
    AddMember: ({ organization_id, ...input }) => hideDefects(accounts.addMember(organization_id, input)),
    ChangeMemberRole: ({ organization_id, ...input }) => hideDefects(accounts.changeMemberRole(organization_id, input)),
    RemoveMember: ({ organization_id, user_id }) => hideDefects(accounts.removeMember(organization_id, user_id))
  })
}))
