import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    globalSetup: ["test/support/globalSetup.ts"],
    // Files share processes (isolate: false below): each starts from @effect/vitest's own `it` (see the file).
    setupFiles: ["test/support/pristineIt.ts"],
    // Each file starts its own database (and often a whole service); two cores run two files at once.
    // `isolate: false` here as well as in the projects: the pool of forks reads it from the root, and with
    // it only in a project every file still got a process of its own (one pid per file; 457 s → 328 s).
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
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
        // The suites share their two processes: each module is loaded once per process rather than once per
        // file (about 1 s a file). Each file still starts its own service on its own database;
        // test/support/pristineIt.ts gives each file @effect/vitest's own `it`, which a previous file's
        // `layer(…)` would otherwise have left behind. What is the process's own (the metrics registry, the
        // monitoring's request count) is shared by the files it runs.
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
