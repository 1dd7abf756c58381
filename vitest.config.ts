import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    globalSetup: ["test/support/globalSetup.ts"],
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
        test: { name: "suites", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, "test/rules/**"] }
      }
    ]
  }
})
