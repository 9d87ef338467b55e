import type { Context, Hono } from "hono";
import { z } from "zod";
import { PageRequest } from "../../domain/pagination.js";
import { parseInput } from "../../domain/validation.js";
import {
  cellRunPage,
  listExperiments,
  reportWithProgress,
} from "../../experiments/experiment-report-from-store.js";
import { ExperimentViewCache } from "../../experiments/experiment-view-cache.js";
import type { ServerDependencies } from "../server-dependencies.js";

/**
 * `runs=false` leaves the report's `runs` empty: at 50,000 runs they are ~50 MB of JSON, and a page
 * that shows cells (and pages a cell's runs) needs none of them.
 */
const ReportQuery = z.strictObject({
  runs: z
    .enum(["true", "false"], { error: "runs must be true or false" })
    .default("true")
    .transform((value) => value === "true"),
});

/** Says whether a report came from the cache (`hit`) or was built for this request (`miss`). */
export const CACHE_HEADER = "x-agent-lab-cache";

function pageOf(c: Context, where: string): PageRequest {
  const { limit, cursor } = c.req.query();
  return parseInput(
    PageRequest,
    { ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) },
    where,
  );
}

/**
 * Experiments, read from the sessions their runs stored (see experiment-report-from-store); a
 * report is built once and served from the cache until a run of the experiment changes.
 */
export function registerExperimentRoutes(app: Hono, deps: ServerDependencies): void {
  const { store } = deps;
  const views = new ExperimentViewCache(store);

  app.get("/api/experiments", async (c) => {
    const page = await listExperiments(store, pageOf(c, "experiments"));
    return c.json({ experiments: page.items, next_cursor: page.next_cursor });
  });

  app.get("/api/experiments/:id", async (c) => {
    const { runs } = parseInput(ReportQuery, { runs: c.req.query("runs") }, "experiment report");
    const { body, hit } = await views.body(c.req.param("id"), runs, (view) => {
      const report = reportWithProgress(view);
      return JSON.stringify(runs ? report : { ...report, runs: [] });
    });
    c.header(CACHE_HEADER, hit ? "hit" : "miss");
    c.header("content-type", "application/json; charset=UTF-8");
    return c.body(body);
  });

  app.get("/api/experiments/:id/cells/:cell/sessions", async (c) => {
    const page = pageOf(c, "cell sessions");
    const { runs: cellRuns, hit } = await views.cellRuns(c.req.param("id"), c.req.param("cell"));
    const runs = cellRunPage(cellRuns, page);
    c.header(CACHE_HEADER, hit ? "hit" : "miss");
    return c.json({ sessions: runs.items, next_cursor: runs.next_cursor });
  });
}
