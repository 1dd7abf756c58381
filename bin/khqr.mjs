#!/usr/bin/env node
// `npx khqr`: runs the CLI's TypeScript source through tsx (a dependency), as the tests and scripts run.
import { register } from "tsx/esm/api"

register()
await import("../cli/khqr.ts")
