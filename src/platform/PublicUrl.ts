/**
 * The origin used in links the service hands out (checkout_url, share links): PUBLIC_BASE_URL, or
 * http://localhost:<the port actually bound> once the server listens.
 */
import { Context, Effect, Layer, Option, Ref } from "effect"
import { AppConfig } from "./Config.ts"

/** Where the service answers when no PUBLIC_BASE_URL says otherwise. */
const localOrigin = (port: number) => `http://localhost:${port}`

export class PublicBaseUrl extends Context.Tag("platform/PublicBaseUrl")<PublicBaseUrl, {
  readonly get: Effect.Effect<string>
  /** Called by the HTTP server once it knows its port; ignored when PUBLIC_BASE_URL is configured. */
  readonly serverBound: (port: number) => Effect.Effect<void>
}>() {
  static readonly layer = Layer.effect(
    PublicBaseUrl,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const configured = config.publicBaseUrl
      const current = yield* Ref.make(Option.getOrElse(configured, () => localOrigin(config.port)))
      return {
        get: Ref.get(current),
        serverBound: (port) =>
          Option.isSome(configured) ? Effect.void : Ref.set(current, localOrigin(port))
      }
    })
  )
}
