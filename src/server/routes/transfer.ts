import type { Hono } from "hono";
import { z } from "zod";
import { SessionExportDocument } from "../../domain/session-export.js";
import { parseInput } from "../../domain/validation.js";
import { SessionId } from "../../store/store-inputs.js";
import { readJsonBody } from "../request-body.js";
import type { ServerDependencies } from "../server-dependencies.js";

const ImportQuery = z.strictObject({ session_id: SessionId.optional() });

/** A file name that is safe in a header whatever the session id holds. */
function exportFileName(sessionId: string): string {
  return `agent-lab-session-${sessionId.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100)}.json`;
}

export function registerTransferRoutes(app: Hono, deps: ServerDependencies): void {
  const { store } = deps;

  app.get("/api/sessions/:id/export", async (c) => {
    const document = await store.exportSession(c.req.param("id"));
    return c.json(document, 200, {
      "Content-Disposition": `attachment; filename="${exportFileName(document.session.id)}"`,
    });
  });

  app.post("/api/import", async (c) => {
    const query = parseInput(ImportQuery, c.req.query(), "query");
    // Checked here too, so a refusal names the document's fields, not the store's method.
    const document = parseInput(
      SessionExportDocument,
      await readJsonBody(c, z.unknown(), deps.maxImportBytes),
      "document",
    );
    const id = await store.importSession(
      document,
      query.session_id === undefined ? {} : { session_id: query.session_id },
    );
    return c.json({ session: await store.getSession(id) }, 201);
  });
}
