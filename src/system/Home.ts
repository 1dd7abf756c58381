/**
 * `GET /`: where to go from the service's root. A browser gets a small page, anything else JSON, both
 * pointing to the API reference, the OpenAPI document, the merchant console and the health check.
 */
import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { API_VERSION } from "../../domain/Version.ts"
import { escapeHtml, page, prefersHtml } from "../platform/Html.ts"

const LINKS = [
  { rel: "docs", href: "/docs", text: "API reference, with a quickstart" },
  { rel: "openapi", href: "/openapi.json", text: "OpenAPI document" },
  { rel: "console", href: "/console", text: "Merchant console" },
  { rel: "health", href: "/health", text: "Health check" }
] as const

export const homeJson = {
  object: "service",
  name: "Merchant payments and loyalty API",
  api_version: API_VERSION,
  links: Object.fromEntries(LINKS.map((link) => [link.rel, link.href]))
}

const PLATFORM = { name: "Merchant payments and loyalty", logo_url: null, primary_color: null, accent_color: null }

const homePage = () =>
  page({
    title: "Merchant payments and loyalty API",
    merchant: PLATFORM,
    body: `<style>
  ul { list-style: none; padding: 0; margin: 16px 0 0; display: grid; gap: 8px; text-align: left; }
  a { display: block; padding: 10px 12px; border: 1px solid #ccd; border-radius: 8px; color: #0b5cad; font-weight: 600;
      text-decoration: none; }
  a:hover, a:focus { background: #e8f0fb; }
  .version { color: #556; font-size: .9rem; }
</style>
  <p>KHQR payments, refunds, webhooks, customers and loyalty.</p>
  <p class="version">API version ${escapeHtml(API_VERSION)}</p>
  <nav aria-label="Where to go"><ul>
${LINKS.map((link) => `    <li><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></li>`).join("\n")}
  </ul></nav>`
  })

export const HomeLive = HttpLayerRouter.add(
  "GET",
  "/",
  Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
    prefersHtml(request.headers["accept"]) ? homePage() : HttpServerResponse.unsafeJson(homeJson))
)
