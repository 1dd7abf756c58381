/**
 * The Khmer typeface of the customer pages (Noto Sans Khmer, SIL Open Font License, from
 * @fontsource/noto-sans-khmer), served from our own origin: no font CDN sees our customers. Only its Khmer
 * glyphs, regular and bold: `unicode-range` leaves Latin text to the system's fonts, and a browser fetches
 * the file only for a page with Khmer on it. Each file's URL carries a hash of its content, so it is cached
 * for a year.
 */
import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const KHMER_RANGE = "U+1780-17FF, U+19E0-19FF, U+200C-200D, U+25CC"
const WEIGHTS = [400, 700] as const

interface FontFile {
  readonly weight: number
  readonly path: string
  readonly body: Uint8Array
}

const fontFiles = (): ReadonlyArray<FontFile> => {
  const directory = join(dirname(createRequire(import.meta.url).resolve("@fontsource/noto-sans-khmer")), "files")
  return WEIGHTS.map((weight) => {
    const body = readFileSync(join(directory, `noto-sans-khmer-khmer-${weight}-normal.woff2`))
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 12)
    return { weight, path: `/fonts/noto-sans-khmer-${weight}.${hash}.woff2`, body }
  })
}

let loaded: ReadonlyArray<FontFile> | undefined
const fonts = () => (loaded ??= fontFiles())

/** The `@font-face` rules of the pages' stylesheet. */
export const fontFaces = (): string =>
  fonts().map((font) =>
    `@font-face { font-family: "Noto Sans Khmer"; font-style: normal; font-weight: ${font.weight}; font-display: swap; ` +
    `src: url(${font.path}) format("woff2"); unicode-range: ${KHMER_RANGE}; }`
  ).join("\n")

/** The font files on the router. */
export const PageFontsLive = Layer.effectDiscard(Effect.gen(function*() {
  const router = yield* HttpLayerRouter.HttpRouter
  for (const font of fonts()) {
    const response = HttpServerResponse.uint8Array(font.body, {
      contentType: "font/woff2",
      headers: {
        "cache-control": "public, max-age=31536000, immutable",
        // Fonts are always fetched in CORS mode: the console's branding preview is a sandboxed frame
        // (origin "null"), which may load the public font only when any origin is allowed.
        "access-control-allow-origin": "*",
        "x-content-type-options": "nosniff"
      }
    })
    yield* router.add("GET", font.path as HttpLayerRouter.PathInput, Effect.succeed(response))
  }
}))
