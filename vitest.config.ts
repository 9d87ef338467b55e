import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "web/src/**/*.test.ts"],
    // Child processes and worker threads run the built package, as users do.
    globalSetup: ["test/global-setup.ts"],
    reporters: ["default", "./test/summary-reporter.ts"],
    // Vitest's default is one file at a time on a 2-core machine (cores - 1). Most files here
    // wait on child processes, browsers and sockets part of the time: two at a time took the
    // suite from about 17 to about 13.5 minutes on this machine, and three from 599 to 545 s of
    // vitest (4 December, same tree; with two, the cores were 71% busy over `npm test`).
    // AGENT_LAB_TEST_WORKERS sets it (2 if a loaded machine makes timing tests flaky).
    maxWorkers: Number(process.env.AGENT_LAB_TEST_WORKERS ?? 3),
    // A worker imports the lab's modules once for all its files instead of once per file: the
    // suite took 8.8 minutes against 11.4 isolated, on 3 December. No test mocks a module, and
    // those that stub the environment or the timers restore them. AGENT_LAB_TEST_ISOLATE=1 gives
    // each file its own module graph again, to tell a leak between files from a failure.
    isolate: process.env.AGENT_LAB_TEST_ISOLATE === "1",
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
