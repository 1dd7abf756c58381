/**
 * The interactive API reference at `/docs`: Scalar's standalone browser bundle from the
 * `@scalar/api-reference` package, served by this service under a content-hashed URL, so the reference
 * works offline and behind a firewall and loads nothing from another origin. The page runs no inline
 * script (Scalar reads its settings from a JSON data block) and its Content-Security-Policy allows
 * scripts, fonts, images and requests from this origin only; the specification comes from `/openapi.json`.
 */
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { gzipSync } from "node:zlib"
import { htmlDocument } from "../platform/pages/Document.tsx"

export const DOCS_PATH = "/docs"
export const DOCS_ASSETS_PATH = "/docs/assets"

/** Where the reference's script is served, and its content. */
interface DocsAsset {
  readonly path: `/${string}`
  readonly body: Uint8Array
  /** The gzip form, made at the first request that accepts it (the bundle is large; start-up is not). */
  gzipped: Uint8Array | undefined
}

const contentHash = (body: Uint8Array) => createHash("sha256").update(body).digest("hex").slice(0, 16)

const assetOf = (name: string, body: Uint8Array): DocsAsset => ({
  path: `${DOCS_ASSETS_PATH}/${name}-${contentHash(body)}.js`,
  body,
  gzipped: undefined
})

/** The standalone bundle as the installed package ships it, and its version. */
const scalarBundle = () => {
  // The package's entry is dist/index.js; its browser bundle sits beside it (not an exported path).
  const entry = createRequire(import.meta.url).resolve("@scalar/api-reference")
  const packageDir = dirname(dirname(entry))
  const version = (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string }).version
  return { version, body: readFileSync(join(packageDir, "dist", "browser", "standalone.js")) }
}

// Scalar's stylesheet names fonts that its font server supplies; the system's own are used instead.
const SYSTEM_FONTS = ":root, .scalar-app { --scalar-font: ui-sans-serif, system-ui, sans-serif; " +
  "--scalar-font-code: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }"

/**
 * Scalar's settings, read by its bundle from the mount point's `data-configuration`: the document of
 * this origin, no fonts from Scalar's servers, no telemetry, and no request proxy on another origin
 * (the "test request" client calls this service directly).
 */
const configurationOf = (openApiPath: string) => ({
  url: openApiPath,
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  documentDownloadType: "json",
  customCss: SYSTEM_FONTS
})

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  // Scalar compiles its schema validators with `new Function` and renders nothing without it; scripts
  // still come from this origin only.
  "script-src 'self' 'unsafe-eval'",
  // Scalar sets styles at run time (a style element, style attributes).
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const SECURITY_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff"
}

/** The reference's page, made by the same renderer as the hosted pages (every attribute escaped). */
const pageOf = (title: string, openApiPath: string, script: DocsAsset) =>
  htmlDocument(
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
      </head>
      <body>
        <script id="api-reference" type="application/json" data-configuration={JSON.stringify(configurationOf(openApiPath))}></script>
        <script src={script.path}></script>
      </body>
    </html>
  )

const acceptsGzip = (request: HttpServerRequest.HttpServerRequest) =>
  /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")

const serveAsset = (asset: DocsAsset) => (request: HttpServerRequest.HttpServerRequest) =>
  Effect.sync(() => {
    const headers = {
      ...SECURITY_HEADERS,
      // The URL changes with the content: a browser may keep it for a year without asking again.
      "cache-control": "public, max-age=31536000, immutable",
      vary: "accept-encoding"
    }
    if (!acceptsGzip(request)) {
      return HttpServerResponse.uint8Array(asset.body, { contentType: "text/javascript; charset=utf-8", headers })
    }
    asset.gzipped ??= gzipSync(asset.body)
    return HttpServerResponse.uint8Array(asset.gzipped, {
      contentType: "text/javascript; charset=utf-8",
      headers: { ...headers, "content-encoding": "gzip" }
    })
  })

/** `/docs` and its script on the router; `openApiPath` is where the page reads the document. */
export const docsRoutes = (options: { readonly title: string; readonly openApiPath: string }) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpLayerRouter.HttpRouter
    const bundle = yield* Effect.sync(scalarBundle)
    const scalar = assetOf(`scalar-api-reference-${bundle.version}`, bundle.body)
    const page = pageOf(options.title, options.openApiPath, scalar)
    const pageResponse = HttpServerResponse.html(page).pipe(
      HttpServerResponse.setHeaders({ ...SECURITY_HEADERS, "cache-control": "no-cache" })
    )
    yield* router.add("GET", DOCS_PATH, Effect.succeed(pageResponse))
    yield* router.add("GET", scalar.path, serveAsset(scalar))
  }))
