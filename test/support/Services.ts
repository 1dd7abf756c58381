/**
 * The business services beside the running test app, for tests that call a service directly — those of
 * time rules, under TestClock, which reaches the calling fiber only, never the HTTP server's. Fixtures
 * still go through HTTP (support/Accounts.ts); the principal a route would have resolved is provided
 * by hand.
 *
 * The service's own background work (expiry sweep, webhook dispatcher, purges) keeps the real clock, so
 * time-rule tests start their test clock in the future (`FUTURE_START`): nothing they make is ever due
 * for that background work, and only the test decides when time passes.
 */
import { Effect, Layer, Option } from "effect"
import { type ApiKeyPrincipal, CurrentPrincipal, type Principal, type UserPrincipal } from "../../domain/Auth.ts"
import type { ApiKeyWithSecret } from "../../domain/ApiKeys.ts"
import { ServicesLive } from "../../runtime/Services.ts"
import { AccountsService } from "../../src/accounts/Service.ts"
import { PaymentsRepo } from "../../src/payments/Repo.ts"
import type { AppConfigShape } from "../../src/platform/Config.ts"
import { SecretBox } from "../../src/platform/Crypto.ts"
import { WebhooksRepo } from "../../src/webhooks/Repo.ts"
import type { Store } from "../../domain/Stores.ts"
import { createStore, type SignedUp, signUp } from "./Accounts.ts"
import { TestApp, testAppLayer } from "./TestApp.ts"
import { withTestClockAt } from "./TestTime.ts"

/** A start for the test clock far beyond anything the real clock reaches during a test run. */
export const FUTURE_START = Date.parse("2030-01-07T09:00:00Z")

/** The running test app, with every business service and the repos (and secrets) time-rule tests look into. */
export const servicesOnTestApp = (overrides: Partial<AppConfigShape> = {}) =>
  Layer.mergeAll(PaymentsRepo.Default, WebhooksRepo.Default, SecretBox.Default).pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(testAppLayer(overrides))
  )

/**
 * The principal of a signed-up user's session, resolved as the authentication middleware does. Resolve it
 * before the test clock moves: the session's lifetime runs on the clock that issued it.
 */
export const sessionPrincipal = (user: SignedUp): Effect.Effect<UserPrincipal, never, AccountsService> =>
  Effect.flatMap(AccountsService, (accounts) => accounts.authenticateSession(user.token)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.dieMessage(`the session of ${user.email} is not live`),
      onSome: Effect.succeed
    }))
  )

/** The principal of a test-mode API key as the authentication middleware makes it. */
export const apiKeyPrincipal = (key: ApiKeyWithSecret, organizationId: SignedUp["organizationId"]): ApiKeyPrincipal => ({
  _tag: "ApiKey",
  keyId: key.id,
  storeId: key.store_id,
  organizationId,
  livemode: key.mode === "live"
})

/** Runs `effect` as `principal` does, as a route would after authenticating it. */
export const actingAs = (principal: Principal) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, CurrentPrincipal, principal)

export interface StoreOwner {
  readonly user: SignedUp
  readonly store: Store
  /** Runs an effect as the owner's session. */
  readonly asOwner: ReturnType<typeof actingAs>
}

/**
 * Runs `test` under the test clock from FUTURE_START for the owner of a new store, made over HTTP (and
 * their session resolved) beforehand, on the real clock that issues it.
 */
export const withNewStoreOwner = <A, E, R>(test: (owner: StoreOwner) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const app = yield* TestApp
    const user = yield* Effect.promise(() => signUp(app))
    const store = yield* Effect.promise(() => createStore(app, user.token))
    const owner: StoreOwner = { user, store, asOwner: actingAs(yield* sessionPrincipal(user)) }
    return yield* withTestClockAt(FUTURE_START)(test(owner))
  })
