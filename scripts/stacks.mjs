/**
 * Stack traces of the bundle in source terms (`src/payments/Repo.ts:180:27`, not `dist/main.mjs:98213:11`),
 * without Node's `--enable-source-maps`.
 *
 * With that flag Node decodes the whole source map of the bundle the first time any stack is formatted —
 * and Effect formats one while it loads — into about 80 MiB of small objects that stay on the heap for
 * good, and every full garbage collection marks them again. Here the map is read only when a stack that
 * passes through the bundle is formatted after start-up (a defect being logged, in practice), and decoded
 * by `@jridgewell/trace-mapping` (the source-map reader of Vitest and Babel). No stack is formatted on the request path (each `Effect.fn` call
 * captures one, which costs the same with or without this), so none of this runs per request.
 */
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping"
import { readFileSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"

/**
 * Formats the stacks of errors thrown through `bundleFile` with the positions of its sources, read from
 * `<bundleFile>.map` the first time they are needed. Call the returned function once the bundle has
 * loaded: stacks formatted while it loads (Effect checks one) are left as they are, so start-up never
 * reads the map.
 */
export const mapStacksOf = (bundleFile) => {
  const bundleUrl = pathToFileURL(bundleFile).href
  const mapFile = `${bundleFile}.map`
  let loaded = false
  /** @type {undefined | null | TraceMap} */
  let map
  const readMap = () => {
    if (map !== undefined) return map
    try {
      map = new TraceMap(readFileSync(mapFile, "utf8"), pathToFileURL(mapFile).href)
    } catch {
      // No map (deleted, or a bundle built without one): the bundle's own positions are shown.
      map = null
    }
    return map
  }
  /** `file:line:column` in the sources for a 1-based line and column of the bundle, if the map has it. */
  const original = (line, column) => {
    const found = readMap()
    if (found === null) return undefined
    const position = originalPositionFor(found, { line, column: column - 1 })
    if (position.source === null) return undefined
    const source = position.source.startsWith("file:") ? fileURLToPath(position.source) : position.source
    return `${source}:${position.line}:${position.column + 1}`
  }
  const formatSite = (site) => {
    const text = String(site)
    if (!loaded || site.getFileName() !== bundleUrl) return text
    const line = site.getLineNumber()
    const column = site.getColumnNumber()
    const position = `${bundleUrl}:${line}:${column}`
    const mapped = original(line, column)
    return mapped === undefined || !text.includes(position) ? text : text.replace(position, mapped)
  }
  // V8's own format: the error's `toString()`, then one `    at …` line per frame.
  Error.prepareStackTrace = (error, sites) => {
    let header
    try {
      header = Error.prototype.toString.call(error)
    } catch {
      header = "Error"
    }
    let stack = header
    for (const site of sites) stack += `\n    at ${formatSite(site)}`
    return stack
  }
  return () => {
    loaded = true
  }
}
