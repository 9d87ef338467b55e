import type { Hono } from "hono";
import { z } from "zod";
import { PageRequest } from "../../domain/pagination.js";
import { parseInput } from "../../domain/validation.js";
import { cellRunPage, reportWithProgress } from "../../experiments/experiment-report-from-store.js";
import { ExperimentViewCache } from "../../experiments/experiment-view-cache.js";
import { ExperimentListQuery } from "../../store/experiment-records.js";
import { streamExperimentEvents, streamIdle } from "../experiment-events.js";
import { launchExperiment } from "../experiment-launch.js";
import { readJsonBody } from "../request-body.js";
import { queryOf } from "../request-query.js";
import { ExperimentNotRunningError } from "../running-experiments.js";
import { scenarioList, scenarioView } from "../scenario-view.js";
import type { ServerDependencies } from "../server-dependencies.js";

/** `POST /api/experiments`: a suite of the catalog by name (never a path), and what to vary. */
export const StartExperimentBody = z.strictObject({
  suite: z.string().min(1, "name a suite (GET /api/suites lists them)").max(200),
  cells: z
    .array(z.string().min(1).max(1000))
    .min(1, "name at least one cell, or leave cells out to run every cell")
    .max(1000)
    .optional(),
  repetitions: z.number().int().min(1).max(1000).optional(),
  concurrency: z.number().int().min(1).max(64).optional(),
});

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

/**
 * A cell's runs: in the report's order (scenario, then repetition), or the failed ones first, then
 * the incomplete, then the passed (each in that order), so a cell of thousands shows its failures
 * on its first page.
 */
const CellRunsQuery = PageRequest.extend({
  order: z
    .enum(["run", "failed_first"], { error: "order must be run or failed_first" })
    .default("run"),
});

/**
 * Experiments, read from the sessions their runs stored (see experiment-report-from-store); a
 * report is built once and served from the cache until a run of the experiment changes.
 */
export function registerExperimentRoutes(app: Hono, deps: ServerDependencies): void {
  const { store, experiments } = deps;
  const views = new ExperimentViewCache(store);

  app.get("/api/experiments", async (c) => {
    // `experiment` narrows the list to one: what a page watching it polls (cheap: one grouped
    // query), its `revision` telling it when runs from another process changed the report.
    const query = parseInput(ExperimentListQuery, queryOf(c), "query");
    const page = await store.listExperimentSummaries(query);
    const items = page.items.map((item) => {
      const running = experiments.get(item.id);
      return running === undefined
        ? { ...item, running: false }
        : { ...item, running: true, progress: running.progress };
    });
    return c.json({ experiments: items, next_cursor: page.next_cursor });
  });

  app.post("/api/experiments", async (c) => {
    const body = await readJsonBody(c, StartExperimentBody, deps.maxBodyBytes);
    const { suite, file } = deps.suites.find(body.suite);
    const launched = await launchExperiment(
      {
        store,
        providers: deps.runTurnDefaults.providers,
        experiments,
        reportError: deps.reportError,
      },
      {
        suite,
        file,
        cells: body.cells,
        repetitions: body.repetitions,
        concurrency: body.concurrency,
      },
    );
    const events_url = `/api/experiments/${encodeURIComponent(launched.experiment_id)}/events`;
    return c.json({ ...launched, events_url }, 202);
  });

  app.get("/api/experiments/:id/events", async (c) => {
    const id = c.req.param("id");
    const watched = experiments.watchable(id);
    if (watched !== undefined)
      return streamExperimentEvents(c, watched, experiments, deps.heartbeatMs);
    const { view } = await views.get(id);
    const cells = view.report.cells;
    return streamIdle(c, {
      finished: cells.reduce((sum, cell) => sum + cell.runs, 0),
      successes: cells.reduce((sum, cell) => sum + cell.successes, 0),
      incomplete: view.pending.length,
    });
  });

  app.post("/api/experiments/:id/cancel", (c) => {
    const id = c.req.param("id");
    if (!experiments.cancel(id, new Error("cancelled through the API"))) {
      throw new ExperimentNotRunningError(id);
    }
    return c.json({ experiment_id: id, cancelling: true }, 202);
  });

  app.get("/api/experiments/:id/scenarios", async (c) => {
    const { view, hit } = await views.get(c.req.param("id"));
    c.header(CACHE_HEADER, hit ? "hit" : "miss");
    return c.json(scenarioList(view));
  });

  app.get("/api/experiments/:id/scenarios/:scenario", async (c) => {
    const { view, hit } = await views.get(c.req.param("id"));
    c.header(CACHE_HEADER, hit ? "hit" : "miss");
    return c.json(scenarioView(view, c.req.param("scenario")));
  });

  app.get("/api/experiments/:id", async (c) => {
    const { runs } = parseInput(ReportQuery, queryOf(c), "query");
    const { body, hit } = await views.body(c.req.param("id"), runs, (view) => {
      const report = reportWithProgress(view);
      return JSON.stringify(runs ? report : { ...report, runs: [] });
    });
    c.header(CACHE_HEADER, hit ? "hit" : "miss");
    c.header("content-type", "application/json; charset=UTF-8");
    return c.body(body);
  });

  app.get("/api/experiments/:id/cells/:cell/sessions", async (c) => {
    const { order, ...page } = parseInput(CellRunsQuery, queryOf(c), "query");
    const list = { experiment: c.req.param("id"), cell: c.req.param("cell"), order };
    const { runs: cellRuns, hit } = await views.cellRuns(list.experiment, list.cell, order);
    const runs = cellRunPage(cellRuns, page, list);
    c.header(CACHE_HEADER, hit ? "hit" : "miss");
    return c.json({ sessions: runs.items, next_cursor: runs.next_cursor });
  });
}
