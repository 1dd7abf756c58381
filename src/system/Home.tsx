/**
 * `GET /`: where to go from the service's root. A browser gets a small page, anything else JSON, both
 * pointing to the API reference, the OpenAPI document, the merchant console and the health check.
 */
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { API_VERSION } from "../../domain/Version.ts"
import { prefersHtml } from "../platform/Html.ts"
import { HostedPage, renderHostedPage, useCopy } from "../platform/pages/Document.tsx"

const LINKS = [
  { rel: "docs", href: "/docs", text: "home.docs" },
  { rel: "openapi", href: "/openapi.json", text: "home.openapi" },
  { rel: "console", href: "/console", text: "home.console" },
  { rel: "health", href: "/health", text: "home.health" }
] as const

export const homeJson = {
  object: "service",
  name: "Merchant payments and loyalty API",
  api_version: API_VERSION,
  links: Object.fromEntries(LINKS.map((link) => [link.rel, link.href]))
}

const HOME_STYLES = `
  ul { list-style: none; padding: 0; margin: 16px 0 0; display: grid; gap: 8px; text-align: left; }
  nav a { display: block; padding: 10px 12px; border: 1px solid #ccd; border-radius: 8px; color: #0b5cad; font-weight: 600;
      text-decoration: none; }
  nav a:hover, nav a:focus { background: #e8f0fb; }
  .version { color: #556; font-size: .9rem; }
`

const HomePage = () => {
  const copy = useCopy()
  return (
    <HostedPage
      title={copy.text("home.title")}
      branding={{ name: copy.text("home.platform"), logo_url: null, primary_color: null, accent_color: null }}
      styles={HOME_STYLES}
    >
      <p>{copy.text("home.intro")}</p>
      <p className="version">{copy.text("home.version", { version: API_VERSION })}</p>
      <nav aria-label={copy.text("home.nav")}>
        <ul>
          {LINKS.map((link) => (
            <li key={link.rel}>
              <a href={link.href}>{copy.text(link.text)}</a>
            </li>
          ))}
        </ul>
      </nav>
    </HostedPage>
  )
}

export const HomeLive = HttpLayerRouter.add(
  "GET",
  "/",
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    prefersHtml(request.headers["accept"]) ? renderHostedPage(<HomePage />) : Effect.succeed(HttpServerResponse.unsafeJson(homeJson)))
)
