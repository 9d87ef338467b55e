import type { Hono } from "hono";
import { openApiDocument } from "../openapi.js";
import type { ServerDependencies } from "../server-dependencies.js";

export function registerMetaRoutes(app: Hono, deps: ServerDependencies): void {
  app.get("/api/health", (c) => c.json({ ok: true, version: deps.version }));
  const document = openApiDocument(deps.version);
  app.get("/api/openapi.json", (c) => c.json(document));
  // What `agent-lab tools` lists: the same provider the turns use, so the two cannot disagree.
  app.get("/api/tools", async (c) =>
    c.json({ tools: await deps.runTurnDefaults.providers.tools.list(c.req.raw.signal) }),
  );
}
