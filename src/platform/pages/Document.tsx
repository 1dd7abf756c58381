/**
 * The one renderer of every page a customer's browser sees (checkout, receipt, wallet, games, payment links,
 * referral landing, password reset): React on the server, so every text and attribute is escaped by the
 * renderer and no page writes HTML by hand. Here, once: the document (its `lang`, the Khmer font, the
 * styles), the store's branding, the language switch, and a Content-Security-Policy that runs only the
 * page's own inline script, by a per-response nonce.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { createContext, type ReactElement, type ReactNode, useContext } from "react"
import { renderToStaticMarkup } from "react-dom/server"
import { fontFaces } from "./Fonts.ts"
import {
  chooseLanguage,
  type Copy,
  copyFor,
  LANGUAGE_COOKIE,
  LANGUAGE_NAMES,
  LANGUAGE_PARAM,
  LANGUAGES,
  type Language
} from "./Locale.ts"

/** What a page shows of its store: the name, and the branding the merchant chose. */
export interface PageBranding {
  readonly name: string
  readonly logo_url: string | null
  readonly primary_color: string | null
  readonly accent_color: string | null
}

interface PageSettings {
  readonly copy: Copy
  readonly nonce: string
  /** The address of this very page in each language, for the switch. */
  readonly languageLinks: Record<Language, string>
}

const PageContext = createContext<PageSettings | null>(null)

const usePageSettings = (): PageSettings => {
  const settings = useContext(PageContext)
  if (settings === null) throw new Error("A hosted page renders only inside renderHostedPage")
  return settings
}

/** The texts, money and dates of the page being rendered, in its language. */
export const useCopy = (): Copy => usePageSettings().copy

/** JSON that is safe inside a <script> element: no `</script>`, no HTML comment openers. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")

const COLOR = /^#[0-9a-f]{6}$/i
const safeColor = (value: string | null, fallback: string) => (value !== null && COLOR.test(value) ? value : fallback)
const safeLogo = (value: string | null) => (value !== null && /^https:\/\//.test(value) ? value : null)

const BASE_STYLES = `
  * { box-sizing: border-box; }
  body { margin: 0; font-family: "Noto Sans Khmer", system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
         background: var(--accent); color: #1d2330; min-height: 100vh; display: flex; align-items: center;
         justify-content: center; padding: 16px; line-height: 1.45; }
  :lang(km) { line-height: 1.75; }
  main { background: #fff; border-radius: 16px; box-shadow: 0 8px 30px rgba(0,0,0,.08); width: 100%; max-width: 420px;
         padding: 16px 24px 28px; text-align: center; }
  .languages { display: flex; justify-content: flex-end; gap: 4px; margin: 0 -8px 4px 0; font-size: .85rem; }
  .languages a { color: #3d4354; padding: 4px 8px; border-radius: 6px; text-decoration: none; font-weight: 400; }
  .languages a[aria-current="true"] { background: var(--accent); color: #1d2330; font-weight: 600; }
  .languages a:hover, .languages a:focus-visible { text-decoration: underline; }
  header { display: flex; align-items: center; justify-content: center; gap: 12px; margin-bottom: 12px; }
  header img { width: 44px; height: 44px; object-fit: contain; border-radius: 8px; }
  header h1 { font-size: 1.1rem; margin: 0; overflow-wrap: anywhere; }
  .amount { font-size: 2.2rem; font-weight: 700; color: var(--primary); margin: 8px 0 4px; font-variant-numeric: tabular-nums; }
  .description { color: #556; margin: 0 0 16px; overflow-wrap: anywhere; white-space: pre-line; }
  .qr { width: 100%; max-width: 280px; aspect-ratio: 1; margin: 8px auto; display: block; }
  .status { font-size: 1.25rem; font-weight: 600; margin: 16px 0 4px; }
  .detail { color: #556; margin: 0 0 8px; }
  .countdown { color: #556; font-variant-numeric: tabular-nums; }
  .badge { display: inline-block; font-size: .75rem; background: #fff3cd; color: #7a5b00; border-radius: 999px; padding: 2px 10px; }
  [data-state="paid"] .status, [data-state="partially_refunded"] .status, [data-state="refunded"] .status { color: #1a7f37; }
  [data-state="expired"] .status, [data-state="failed"] .status, [data-state="cancelled"] .status { color: #b42318; }
  [data-state]:not([data-state="pending"]):not([data-state="scanned"]) .qr,
  [data-state]:not([data-state="pending"]):not([data-state="scanned"]) .countdown { display: none; }
  table { width: 100%; border-collapse: collapse; margin-top: 12px; text-align: left; }
  th, td { padding: 6px 0; border-bottom: 1px solid #eee; vertical-align: top; }
  th { font-weight: 400; color: #556; padding-right: 12px; }
  td { text-align: right; overflow-wrap: anywhere; }
  .title { font-size: 1.2rem; font-weight: 600; margin: 8px 0 4px; overflow-wrap: anywhere; }
  form { display: grid; gap: 10px; margin-top: 16px; text-align: left; }
  label { font-size: .9rem; color: #556; display: grid; gap: 4px; }
  input { font: inherit; padding: 10px 12px; border: 1px solid #8a8fa0; border-radius: 8px; }
  form button { font: inherit; font-weight: 600; padding: 12px; border: 0; border-radius: 8px; background: var(--primary);
                color: #fff; cursor: pointer; }
  form button[disabled] { opacity: .6; cursor: wait; }
  .error { color: #b42318; min-height: 1.2em; margin: 0; }
  @media (max-width: 360px) {
    body { padding: 8px; }
    main { padding: 12px 16px 20px; }
  }
  @media print {
    body { background: #fff; display: block; padding: 0; min-height: 0; }
    main { box-shadow: none; max-width: 640px; margin: 0 auto; border-radius: 0; padding: 0; }
    .languages, .no-print { display: none !important; }
  }
`

/** The address of the page the request asked for, with `lang` set to each language. */
const languageLinksOf = (url: URL): Record<Language, string> => {
  const linkTo = (language: Language) => {
    const params = new URLSearchParams(url.searchParams)
    params.set(LANGUAGE_PARAM, language)
    return `${url.pathname}?${params.toString()}`
  }
  return { en: linkTo("en"), km: linkTo("km") }
}

const LanguageSwitch = () => {
  const { copy, languageLinks } = usePageSettings()
  return (
    <nav className="languages" aria-label={copy.text("page.language")}>
      {LANGUAGES.map((language) => (
        <a
          key={language}
          href={languageLinks[language]}
          lang={language}
          hrefLang={language}
          aria-current={language === copy.language ? "true" : undefined}
        >
          {LANGUAGE_NAMES[language]}
        </a>
      ))}
    </nav>
  )
}

/**
 * The document of a hosted page: the store's branding around `children`. `state` is the payment status the
 * page starts in (its styles hide the QR code once the payment is over); `script` runs with the page's
 * nonce, `data` reaching it as the constant `data`.
 */
export const HostedPage = (props: {
  readonly title: string
  readonly branding: PageBranding
  readonly state?: string | undefined
  readonly styles?: string | undefined
  readonly script?: { readonly data: unknown; readonly source: string } | undefined
  readonly children: ReactNode
}) => {
  const { copy, nonce } = usePageSettings()
  const primary = safeColor(props.branding.primary_color, "#0b5cad")
  const accent = safeColor(props.branding.accent_color, "#e8f0fb")
  const logo = safeLogo(props.branding.logo_url)
  // Style and script texts are the pages' own constants: React writes them as they are (no merchant text
  // ever goes in them; the script's data is JSON made safe for a script element).
  return (
    <html lang={copy.language}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{props.title}</title>
        <style>{`${fontFaces()}\n:root { --primary: ${primary}; --accent: ${accent}; }${BASE_STYLES}${props.styles ?? ""}`}</style>
      </head>
      <body>
        <main data-state={props.state}>
          <LanguageSwitch />
          <header>
            {logo === null ? null : <img src={logo} alt="" />}
            <h1>{props.branding.name}</h1>
          </header>
          {props.children}
        </main>
        {props.script === undefined
          ? null
          : <script nonce={nonce}>{`(() => {\nconst data = ${scriptJson(props.script.data)};\n${props.script.source}\n})();`}</script>}
      </body>
    </html>
  )
}

/** A whole HTML document of `element` (an `<html>` element): React writes everything but the doctype. */
export const htmlDocument = (element: ReactElement): string => "<!doctype html>\n" + renderToStaticMarkup(element)

const CONTENT_SECURITY_POLICY = (nonce: string, frameAncestors: "'none'" | "'self'") =>
  `default-src 'none'; img-src data: https:; style-src 'unsafe-inline'; font-src 'self'; script-src 'nonce-${nonce}'; ` +
  `connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${frameAncestors}`

const ONE_YEAR_SECONDS = 365 * 24 * 60 * 60

/**
 * The HTML response of a hosted page for the current request: in the language the request asks for (see
 * `chooseLanguage`), remembered in a cookie when picked with the switch; never cached, no Referer (the
 * address may hold a credential).
 */
export const renderHostedPage = (
  page: ReactElement,
  options: {
    /** Who may frame the page: nobody, unless a page of the service's own shows it (the console's preview). */
    readonly frameAncestors?: "'self'"
  } = {}
) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const url = new URL(request.url, "http://page.invalid")
    const picked = url.searchParams.get(LANGUAGE_PARAM)
    const language = chooseLanguage({
      picked,
      remembered: request.cookies[LANGUAGE_COOKIE],
      acceptLanguage: request.headers["accept-language"]
    })
    const nonce = randomBytes(16).toString("base64")
    const settings: PageSettings = { copy: copyFor(language), nonce, languageLinks: languageLinksOf(url) }
    const html = htmlDocument(<PageContext.Provider value={settings}>{page}</PageContext.Provider>)
    const response = HttpServerResponse.html(html).pipe(
      HttpServerResponse.setHeaders({
        "content-security-policy": CONTENT_SECURITY_POLICY(nonce, options.frameAncestors ?? "'none'"),
        "content-language": language,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff"
      })
    )
    return picked === language
      ? HttpServerResponse.unsafeSetCookie(response, LANGUAGE_COOKIE, language, {
        path: "/",
        maxAge: `${ONE_YEAR_SECONDS} seconds`,
        sameSite: "lax",
        httpOnly: true
      })
      : response
  })
