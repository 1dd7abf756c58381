#!/usr/bin/env node
// `npx khqr`: the command's bundle (dist/khqr.mjs, built with the service's by `npm install` and by every start
// after a change) when it is current, which starts in a fraction of the time; otherwise the TypeScript
// source through tsx (a dependency), so a change is never run stale.
import { pathToFileURL } from "node:url"
import { bundleOf, CLI_ENTRY, isStale } from "../scripts/build.mjs"

if (isStale(CLI_ENTRY)) {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../cli/khqr.ts")
} else {
  await import(pathToFileURL(bundleOf(CLI_ENTRY)).href)
}
