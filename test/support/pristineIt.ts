/**
 * Runs before every test file. The suites share their processes (vitest.config.ts: `isolate: false`), and
 * @effect/vitest's `layer(…)` gives its suite's methods to vitest's one `it` object by assigning them onto it:
 * a file that opened a layer would hand its `it.effect` (its own service, by then closed, and without the
 * test services) to the next file in the same process. Each file starts from the package's own methods.
 */
import { effect, flakyTest, it, layer, live, prop, scoped, scopedLive } from "@effect/vitest"

Object.assign(it, { effect, flakyTest, layer, live, prop, scoped, scopedLive })
