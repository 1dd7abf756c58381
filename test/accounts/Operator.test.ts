/**
 * `npm run admin -- verify-email <address>`: the first platform administrator of a deployment without
 * mail. Only a PLATFORM_ADMIN_EMAILS address is verified, and only a registered one; the command itself
 * runs as a process on the service's configuration.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Option, Redacted } from "effect"
import { execFile } from "node:child_process"
import { verifyPlatformAdminEmail } from "../../src/accounts/Operator.ts"
import { signUp } from "../support/Accounts.ts"
import { clientAs } from "../support/Client.ts"
import { TestApp, testAppLayer } from "../support/TestApp.ts"

const LISTED = "first-admin@example.test"
const LISTED_LATER = "second-admin@example.test"
const ADMINS = [LISTED, LISTED_LATER, "never-registered@example.test"]

const runCommand = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile("npx", ["tsx", "scripts/admin.ts", ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    }))

describe("operator command verify-email", () => {
  layer(testAppLayer({ platformAdminEmails: ADMINS }), { timeout: 120_000, excludeTestServices: true })("", (it) => {
    it.effect("verifies a listed, registered address, and refuses any other", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        const admin = yield* Effect.promise(() => signUp(app, { email: LISTED, verifyEmail: false }))
        const api = yield* clientAs(app, admin.token)
        expect((yield* api.session.me()).user).toMatchObject({ email_verified: false, platform_admin: false })

        expect(yield* verifyPlatformAdminEmail(" First-Admin@Example.test ")).toMatch(/is now a platform administrator$/)
        expect((yield* api.session.me()).user).toMatchObject({ email_verified: true, platform_admin: true })
        expect(yield* verifyPlatformAdminEmail(LISTED)).toMatch(/verified already/)

        const plain = yield* Effect.promise(() => signUp(app, { verifyEmail: false }))
        const refused = yield* Effect.either(verifyPlatformAdminEmail(plain.email))
        expect(Either.isLeft(refused) && refused.left.message).toMatch(/is not listed in PLATFORM_ADMIN_EMAILS/)
        const plainMe = yield* (yield* clientAs(app, plain.token)).session.me()
        expect(plainMe.user.email_verified).toBe(false)

        const unknown = yield* Effect.either(verifyPlatformAdminEmail("never-registered@example.test"))
        expect(Either.isLeft(unknown) && unknown.left.message).toMatch(/No user has registered/)
      }))

    it.effect("runs as `npm run admin` on the service's configuration, with a clear refusal", () =>
      Effect.gen(function*() {
        const app = yield* TestApp
        if (Option.isNone(app.database.url)) return
        const env = {
          DATABASE_URL: Redacted.value(app.database.url.value),
          PLATFORM_ADMIN_EMAILS: ADMINS.join(","),
          DATA_DIR: app.database.dataDir
        }
        const second = yield* Effect.promise(() => signUp(app, { email: LISTED_LATER, verifyEmail: false }))
        const refusal = yield* runCommand(["verify-email", "someone@example.test"], env)
        expect(refusal.code).toBe(1)
        expect(refusal.stderr).toContain("someone@example.test is not listed in PLATFORM_ADMIN_EMAILS")
        const usage = yield* runCommand(["verify"], env)
        expect(usage.code).toBe(2)
        expect(usage.stderr).toContain("usage: npm run admin -- verify-email <address>")

        const done = yield* runCommand(["verify-email", LISTED_LATER], env)
        expect(done.code).toBe(0)
        expect(done.stdout).toContain(`${LISTED_LATER} (${second.userId}) is verified`)
        expect((yield* (yield* clientAs(app, second.token)).session.me()).user.platform_admin).toBe(true)
      }))
  })
})
