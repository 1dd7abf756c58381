/**
 * Stack traces of the bundle in source terms (`src/payments/Repo.ts:180:27`, not `dist/main.mjs:98213:11`),
 * without Node's `--enable-source-maps`.
 *
 * With that flag Node decodes the whole source map of the bundle the first time any stack is formatted —
 * and Effect formats one while it loads — into about 80 MiB of small objects that stay on the heap for
 * good, and every full garbage collection marks them again. Here the map is read only when a stack that
 * passes through the bundle is formatted after start-up (a defect being logged, in practice), and kept
 * compact: the map's `mappings` text and, per line of the bundle, where that line starts in it and the
 * running positions there, in a typed array. A frame is mapped by decoding the one line it is on. No stack is formatted on the request path (each `Effect.fn` call
 * captures one, which costs the same with or without this), so none of this runs per request.
 */
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { pathToFileURL } from "node:url"

const BASE64 = new Int8Array(128).fill(-1)
for (const [index, char] of [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].entries()) {
  BASE64[char.charCodeAt(0)] = index
}
const SEMICOLON = 59
const COMMA = 44

/**
 * The source map's `mappings` with an index of its lines: for each generated line, where it starts in the
 * text and the running source, line and column (they carry over from line to line) at its start.
 */
const indexMappings = (mappings) => {
  let lines = 1
  for (let i = 0; i < mappings.length; i++) if (mappings.charCodeAt(i) === SEMICOLON) lines++
  const index = new Int32Array(lines * 4)
  let position = 0
  const vlq = () => {
    let value = 0
    let shift = 0
    for (;;) {
      const digit = BASE64[mappings.charCodeAt(position++)]
      value += (digit & 31) << shift
      if ((digit & 32) === 0) break
      shift += 5
    }
    return value & 1 ? -(value >>> 1) : value >>> 1
  }
  const atSegmentEnd = () =>
    position >= mappings.length || mappings.charCodeAt(position) === COMMA || mappings.charCodeAt(position) === SEMICOLON
  let line = 0
  let source = 0
  let originalLine = 0
  let originalColumn = 0
  const state = { source: 0, originalLine: 0, originalColumn: 0, column: 0 }
  /** The segments of one line: calls `onSegment(column, source, line, columnInSource)` for each mapped one. */
  const decodeLine = (generatedLine, onSegment) => {
    position = index[generatedLine * 4]
    state.source = index[generatedLine * 4 + 1]
    state.originalLine = index[generatedLine * 4 + 2]
    state.originalColumn = index[generatedLine * 4 + 3]
    state.column = 0
    while (position < mappings.length) {
      const char = mappings.charCodeAt(position)
      if (char === SEMICOLON) return
      if (char === COMMA) {
        position++
        continue
      }
      state.column += vlq()
      if (atSegmentEnd()) continue
      state.source += vlq()
      state.originalLine += vlq()
      state.originalColumn += vlq()
      if (!atSegmentEnd()) vlq()
      onSegment(state.column, state.source, state.originalLine, state.originalColumn)
    }
  }
  while (position < mappings.length) {
    const char = mappings.charCodeAt(position)
    if (char === SEMICOLON) {
      position++
      line++
      index[line * 4] = position
      index[line * 4 + 1] = source
      index[line * 4 + 2] = originalLine
      index[line * 4 + 3] = originalColumn
      continue
    }
    if (char === COMMA) {
      position++
      continue
    }
    vlq()
    if (atSegmentEnd()) continue
    source += vlq()
    originalLine += vlq()
    originalColumn += vlq()
    if (!atSegmentEnd()) vlq()
  }
  return { lines, decodeLine }
}

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
  /** @type {undefined | null | { sources: Array<string>, lines: number, decodeLine: Function }} */
  let map
  const readMap = () => {
    if (map !== undefined) return map
    try {
      const payload = JSON.parse(readFileSync(mapFile, "utf8"))
      const base = resolve(dirname(mapFile), payload.sourceRoot ?? "")
      map = { sources: payload.sources.map((source) => resolve(base, source)), ...indexMappings(payload.mappings) }
    } catch {
      // No map (deleted, or a bundle built without one): the bundle's own positions are shown.
      map = null
    }
    return map
  }
  /** `file:line:column` in the sources for a 1-based line and column of the bundle, if the map has it. */
  const original = (line, column) => {
    const found = readMap()
    if (found === null || line < 1 || line > found.lines) return undefined
    let best
    found.decodeLine(line - 1, (generatedColumn, source, originalLine, originalColumn) => {
      if (generatedColumn <= column - 1) best = `${found.sources[source]}:${originalLine + 1}:${originalColumn + 1}`
    })
    return best
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
