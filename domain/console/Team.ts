/**
 * The console's Team procedures: an organization's members and their roles, adding an existing user by
 * e-mail, changing a member's role and removing a member. The same rules as the members routes: any member
 * reads the list, `member.manage` (owners and admins) changes it; nobody changes their own membership or
 * the owner's.
 */
import { Rpc, RpcGroup } from "@effect/rpc"
import { Schema } from "effect"
import { AddMemberDto, Member, MemberList } from "../Accounts.ts"
import { ConsoleAuthentication } from "../Console.ts"
import { Forbidden, InvalidRequest, InvalidState, NotFound } from "../Errors.ts"
import { OrganizationId, UserId } from "../Ids.ts"
import { ListParams } from "../Lists.ts"

const ChangeErrors = Schema.Union(InvalidRequest, Forbidden, NotFound, InvalidState)

export class ConsoleTeamRpcs extends RpcGroup.make(
  /** The organization's members, newest first (`GET /dashboard/orgs/:orgId/members`). */
  Rpc.make("ListMembers", {
    payload: { organization_id: OrganizationId, cursor: ListParams.fields.cursor },
    success: MemberList,
    error: Schema.Union(InvalidRequest, Forbidden, NotFound)
  }),
  /** Adds a registered user by e-mail with a role (`POST /dashboard/orgs/:orgId/members`); they are told by e-mail. */
  Rpc.make("AddMember", {
    payload: { organization_id: OrganizationId, ...AddMemberDto.fields },
    success: Member,
    error: ChangeErrors
  }),
  Rpc.make("ChangeMemberRole", {
    payload: { organization_id: OrganizationId, user_id: UserId, role: AddMemberDto.fields.role },
    success: Member,
    error: ChangeErrors
  }),
  /** Ends a membership: the user keeps their account but no longer sees the organization. */
  Rpc.make("RemoveMember", {
    payload: { organization_id: OrganizationId, user_id: UserId },
    success: Member,
    error: ChangeErrors
  })
).middleware(ConsoleAuthentication) {}
