import type { Hono } from "hono";
import {
  cellRunsFromStore,
  experimentReportFromStore,
  listExperiments,
} from "../../experiments/experiment-report-from-store.js";
import type { ServerDependencies } from "../server-dependencies.js";

/** Experiments, read from the sessions their runs stored (see experiment-report-from-store). */
export function registerExperimentRoutes(app: Hono, deps: ServerDependencies): void {
  const { store } = deps;

  app.get("/api/experiments", async (c) => c.json({ experiments: await listExperiments(store) }));

  app.get("/api/experiments/:id", async (c) =>
    c.json(await experimentReportFromStore(store, c.req.param("id"))),
  );

  app.get("/api/experiments/:id/cells/:cell/sessions", async (c) => {
    const sessions = await cellRunsFromStore(store, c.req.param("id"), c.req.param("cell"));
    return c.json({ sessions });
  });
}
