/**
 * Before any test file runs: the console's web app is built if a source changed since the last build
 * (as `npm start` would), once, so browser suites running side by side never rebuild dist/console/
 * under each other's feet.
 */
import { buildConsole, consoleIsStale } from "../../scripts/build.mjs"

export default async function setup() {
  if (consoleIsStale()) await buildConsole()
}
