import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    globalSetup: ["test/support/globalSetup.ts"],
    // Files share processes (isolate: false below): each starts from @effect/vitest's own `it` (see the file).
    setupFiles: ["test/support/pristineIt.ts"],
    // Each file starts its own database (and often a whole service); two cores run two files at once.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    sequence: { concurrent: false },
    projects: [
      {
        extends: true,
        // The in-process rules (test/rules) run one after another in one process that loads their modules
        // once: they start no service, and their feedback is meant to take seconds (5.5–8 s against
        // 9–12 s with a process per file).
        test: { name: "rules", include: ["test/rules/**/*.test.ts"], isolate: false, poolOptions: { forks: { isolate: false, singleFork: true } } }
      },
      {
        extends: true,
        // The suites share their two processes: each module (effect's alone takes 1.4 s) is loaded once per
        // process rather than once per file (a clean clone's run on two cores: 999–1,059 s → 601–617 s). Each file
        // still starts its own service on its own database; test/support/pristineIt.ts gives each file
        // @effect/vitest's own `it`, which a previous file's `layer(…)` would otherwise have left behind.
        test: {
          name: "suites",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/rules/**"],
          isolate: false
        }
      }
    ]
  }
})
