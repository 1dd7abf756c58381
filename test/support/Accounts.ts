/**
 * Account fixtures over the public HTTP API, through the typed client: sign up an owner, add members
 * with a role, create a store. They answer promises, for suites and benches alike, and reject with what
 * the service answered when a step fails.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import type { OrganizationMembership, User } from "../../domain/Accounts.ts"
import type { Store } from "../../domain/Stores.ts"
import { clientAs } from "./Client.ts"
import type { TestAppShape } from "./TestApp.ts"

export const uniqueEmail = (label = "user") => `${label}-${randomBytes(5).toString("hex")}@example.test`

export const TEST_PASSWORD = "correct horse battery staple"

/** Runs one fixture step; a typed failure rejects, naming the step and the error the service answered. */
const fixture = <A, E>(step: string, effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(Effect.catchAll(effect, (error) => Effect.dieMessage(`${step} failed: ${String(error)}`)))

export interface SignedUp {
  readonly token: string
  readonly userId: User["id"]
  readonly organizationId: OrganizationMembership["id"]
  readonly email: string
  readonly password: string
}

/** The newest verification token mailed to `email`, from the link in the mail. */
export const verificationToken = async (app: TestAppShape, email: string): Promise<string> => {
  const mails = await app.mailTo(email)
  const link = mails.map((mail) => mail.body.match(/(\/console\/verify-email\?token=\S+)/)?.[1]).filter(Boolean).pop()
  const token = link === undefined ? null : new URL(link, "http://mail.invalid").searchParams.get("token")
  if (token === null) throw new Error(`no verification mail for ${email}`)
  return token
}

/** The newest link to `path` (e.g. "/console/invitation") in the mails to `recipient`, on the test server's own origin. */
export const mailedLink = async (app: TestAppShape, recipient: string, path: string): Promise<string> => {
  const bodies = (await app.mailTo(recipient)).map((mail) => mail.body)
  const found = bodies.flatMap((body) => body.match(/https?:\/\/\S+/g) ?? []).map((url) => new URL(url)).filter((url) => url.pathname === path)
  const link = found.at(-1)
  if (link === undefined) throw new Error(`no ${path} link mailed to ${recipient}`)
  return app.baseUrl + link.pathname + link.search
}

/** Verifies `email` with the newest verification link sent to it, as the address's owner would. */
export const verifyEmail = async (app: TestAppShape, email: string): Promise<void> => {
  const token = await verificationToken(app, email)
  await fixture(`verifying ${email}`, app.client.auth.verifyEmail({ urlParams: { token } }))
}

/**
 * Registers a user (an Owner of a new organization). Fixture users verify their e-mail address, as real
 * ones do, so a PLATFORM_ADMIN_EMAILS address is an administrator; `verifyEmail: false` leaves it unproven.
 * Shapes built by hand for a service in another process cannot read its mail; their users stay unverified.
 */
export const signUp = async (
  app: TestAppShape,
  overrides: { email?: string; password?: string; organization_name?: string; verifyEmail?: boolean } = {}
): Promise<SignedUp> => {
  const email = overrides.email ?? uniqueEmail("owner")
  const password = overrides.password ?? TEST_PASSWORD
  const grant = await fixture(
    `registering ${email}`,
    app.client.auth.register({
      payload: { email, password, name: "Test Owner", organization_name: overrides.organization_name ?? "Test Organization" }
    })
  )
  if (overrides.verifyEmail !== false && typeof app.mailTo === "function") await verifyEmail(app, email)
  return { token: grant.access_token, userId: grant.user.id, organizationId: grant.organization.id, email, password }
}

/** Registers a new user and adds them to the organization with `role`. */
export const addMember = async (
  app: TestAppShape,
  ownerToken: string,
  organizationId: SignedUp["organizationId"],
  role: "admin" | "developer" | "analyst"
): Promise<{ token: string; userId: SignedUp["userId"]; email: string }> => {
  const member = await signUp(app, { email: uniqueEmail(role), organization_name: `${role}'s own organization` })
  await fixture(
    `adding ${member.email} as ${role}`,
    Effect.flatMap(clientAs(app, ownerToken), (api) =>
      api.members.add({ path: { orgId: organizationId }, payload: { email: member.email, role } }))
  )
  return { token: member.token, userId: member.userId, email: member.email }
}

/** Creates a store in the user's first organization; answers the store as created. */
export const createStore = (app: TestAppShape, token: string, name = "Test Store"): Promise<Store> =>
  fixture(`creating store ${name}`, Effect.flatMap(clientAs(app, token), (api) => api.stores.create({ payload: { name } })))
