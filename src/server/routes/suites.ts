import type { Hono } from "hono";
import type { ServerDependencies } from "../server-dependencies.js";

/**
 * The suites experiments can be started from (see suites-catalog.ts), each with what a start
 * form needs: its cells, scenario count and categories, default repetitions and concurrency.
 * Files that do not parse are listed under `invalid` with their problems, so a typo is visible.
 */
export function registerSuiteRoutes(app: Hono, deps: ServerDependencies): void {
  app.get("/api/suites", (c) => c.json(deps.suites.list()));
}
