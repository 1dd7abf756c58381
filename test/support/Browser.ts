/**
 * Debian's Chromium for browser tests, driven by playwright-core — never a browser a test tool
 * downloads. CI installs it (.ci/run); without it the browser suites are skipped, saying why.
 */
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"
export const HAS_CHROMIUM = existsSync(CHROMIUM)

/** Headless, no sandbox (tests run as root), nothing that reaches for the network. */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

export const launchChromium = () => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 })
