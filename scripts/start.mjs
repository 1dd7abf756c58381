/**
 * `npm start` (and start:api, start:runner): runs the bundle of an entry point (scripts/build.mjs), first
 * rebuilding it if any source is newer, so an edited checkout never starts stale code. The bundle runs
 * in this process, so signals reach the program directly.
 *
 * Usage: node scripts/start.mjs runtime/main.ts
 */
import { pathToFileURL } from "node:url"
import { buildAll, bundleOf, ENTRIES, isStale } from "./build.mjs"
import { mapStacksOf } from "./stacks.mjs"

const entry = process.argv[2] ?? "runtime/main.ts"
if (!ENTRIES.includes(entry)) {
  console.error(`scripts/start.mjs: unknown entry point ${entry}; one of ${ENTRIES.join(", ")}`)
  process.exit(2)
}
if (isStale(entry)) {
  console.error(`scripts/start.mjs: the sources changed since the last build; building dist/ first`)
  await buildAll()
}
// Stacks in source terms without `--enable-source-maps`, whose decoded map would stay on the heap (about
// 80 MiB) for the life of the process (scripts/stacks.mjs); an operator who sets the flag anyway gets
// Node's own mapping.
const loaded = process.sourceMapsEnabled ? () => {} : mapStacksOf(bundleOf(entry))
await import(pathToFileURL(bundleOf(entry)).href)
loaded()
