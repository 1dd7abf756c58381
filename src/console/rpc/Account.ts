/** The account group's handlers (domain/console/Account.ts): each one call to AccountsService. */
import { Effect } from "effect"
import { AccountRpcs } from "../../../domain/console/Account.ts"
import { AccountsService } from "../../accounts/Service.ts"
import { hideDefects } from "./Defects.ts"

export const AccountHandlersLive = AccountRpcs.toLayer(Effect.gen(function*() {
  const accounts = yield* AccountsService
  return AccountRpcs.of({
    Team: ({ organization_id }) => hideDefects(accounts.team(organization_id)),
    InviteMember: ({ organization_id, ...input }) => hideDefects(accounts.inviteMember(organization_id, input)),
    RevokeInvitation: ({ id, organization_id }) => hideDefects(accounts.revokeInvitation(organization_id, id)),
    AcceptInvitation: (input) => hideDefects(accounts.acceptInvitation(input)),
    RequestEmailChange: (input) => hideDefects(accounts.requestEmailChange(input))
  })
}))
