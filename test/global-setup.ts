import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startPostgresCluster } from "./postgres-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** An admin URL of the run's PostgreSQL server (test/postgres-database.ts makes databases on it). */
    pgAdminUrl: string;
  }
}

/**
 * Builds the package once per run, as it ships: dist/ (child processes and worker threads load
 * it) and the web UI in dist/web (the browser tests in test/e2e load it from a real server).
 * Starts a throwaway PostgreSQL for the PostgreSQL store's tests, unless
 * AGENT_LAB_TEST_PG_URL names a server to use instead (an admin URL: the tests create databases).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const run = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    execFileSync(process.execPath, args, { cwd: root, stdio: "inherit", env });
  run(["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"]);
  // vitest sets NODE_ENV=test; a vite build that inherits it bundles React's development build
  // (jsxDEV, source locations, twice the size), which the browser tests would then exercise.
  run(
    [
      "node_modules/vite/bin/vite.js",
      "build",
      "--config",
      "web/vite.config.ts",
      "--logLevel",
      "warn",
    ],
    { ...process.env, NODE_ENV: "production" },
  );
  const given = process.env.AGENT_LAB_TEST_PG_URL;
  if (given) {
    project.provide("pgAdminUrl", given);
    return () => {};
  }
  const cluster = await startPostgresCluster();
  project.provide("pgAdminUrl", cluster.adminUrl);
  return () => cluster.stop();
}
