import { defineConfig } from "vitest/config";
import LongestFirst from "./test/support/sequencer.js";

// The global setup's DynamoDB client runs in this process, outside the test `env` below.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export default defineConfig({
  test: {
    // Test files share their worker's process and modules from file to file (isolate: false): loading the
    // same modules again for each of 130-odd files cost a quarter of the unit tests' time and 18 s of the
    // run. Each file closes the servers it starts; the environment is given back after each file
    // (test/support/env-setup.ts), and each integration file has a database of its own.
    isolate: false,
    // Both projects run in the run's one temporary directory (test/support/run-tmp.ts). Only integration
    // starts DynamoDB Local (Java) and leases each file its own database before the file loads; unit
    // files start no server, process or Java (test/unit/repo/unit-purity.test.ts), so
    // `vitest run --project unit` is the fast half (docs/testing.md).
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], globalSetup: ["test/support/run-tmp.ts"], setupFiles: ["test/support/env-setup.ts", "test/support/unit-no-process.ts"] },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          globalSetup: ["test/support/run-tmp.ts", "test/support/dynamodb-global-setup.ts"],
          setupFiles: ["test/support/env-setup.ts", "test/support/dynamodb-setup.ts"],
        },
      },
    ],
    // Servers (simulator, DynamoDB Local clients) per file: forks keep them apart and are the most robust.
    pool: "forks",
    // Three files at once: most of a file's time is waiting on DynamoDB Local, moto_server, child
    // processes and timers, so on a two-core machine a third fork fills the cores' idle time (vitest's
    // default is one; two took about 10 s longer on a clean clone).
    maxWorkers: 3,
    // Longest files first (test/durations.json), so that no long one is left to run alone at the end.
    sequence: { sequencer: LongestFirst },
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      // The handlers' structured logs and EMF metrics are for CloudWatch, not the test output.
      POWERTOOLS_LOG_LEVEL: "SILENT",
      POWERTOOLS_METRICS_DISABLED: "true",
    },
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // CI reads the pass/fail counts from vitest's JSON report (see .ci/run).
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".vitest-results.json" }]] : ["default"],
  },
});
