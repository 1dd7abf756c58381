/**
 * Account fixtures over the public HTTP API: sign up an owner, add members with a role, create a store.
 */
import { randomBytes } from "node:crypto"
import type { TestAppShape } from "./TestApp.ts"

export const uniqueEmail = (label = "user") => `${label}-${randomBytes(5).toString("hex")}@example.test`

export const TEST_PASSWORD = "correct horse battery staple"

const postJson = async (app: TestAppShape, path: string, body: unknown, token?: string) => {
  const response = await app.fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  })
  const json = await response.json() as any
  if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(json)}`)
  return json
}

export interface SignedUp {
  readonly token: string
  readonly userId: string
  readonly organizationId: string
  readonly email: string
  readonly password: string
}

/** Opens the newest verification link sent to `email`, as the address's owner would. */
export const verifyEmail = async (app: TestAppShape, email: string): Promise<void> => {
  const mails = await app.mailTo(email)
  const link = mails.map((mail) => mail.body.match(/(\/auth\/verify-email\?token=\S+)/)?.[1]).filter(Boolean).pop()
  if (link === undefined) throw new Error(`no verification mail for ${email}`)
  const response = await app.fetch(link)
  if (!response.ok) throw new Error(`GET ${link} answered ${response.status}: ${await response.text()}`)
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
  const body = await postJson(app, "/auth/register", {
    email,
    password,
    name: "Test Owner",
    organization_name: overrides.organization_name ?? "Test Organization"
  })
  if (overrides.verifyEmail !== false && typeof app.mailTo === "function") await verifyEmail(app, email)
  return { token: body.access_token, userId: body.user.id, organizationId: body.organization.id, email, password }
}

/** Registers a new user and adds them to the organization with `role`. */
export const addMember = async (
  app: TestAppShape,
  ownerToken: string,
  organizationId: string,
  role: "admin" | "developer" | "analyst"
): Promise<{ token: string; userId: string; email: string }> => {
  const member = await signUp(app, { email: uniqueEmail(role), organization_name: `${role}'s own organization` })
  await postJson(app, `/dashboard/orgs/${organizationId}/members`, { email: member.email, role }, ownerToken)
  return { token: member.token, userId: member.userId, email: member.email }
}

export const createStore = async (app: TestAppShape, token: string, name = "Test Store"): Promise<{ id: string }> => {
  const body = await postJson(app, "/stores", { name }, token)
  return { id: body.id }
}
