import type { Hono } from "hono";
import { z } from "zod";
import { WellFormedString } from "../../domain/json-limits.js";
import { readJsonBody } from "../request-body.js";
import type { ServerDependencies } from "../server-dependencies.js";
import { requireSession } from "./sessions.js";

export const ApprovalBody = z
  .strictObject({
    decision: z.enum(["approve", "deny"]),
    /** Edited arguments (approve only), checked against the tool's schema before it runs. */
    arguments: z.record(z.string(), z.unknown()).optional(),
    reason: WellFormedString.max(2_000).optional(),
  })
  .refine((body) => body.decision === "approve" || body.arguments === undefined, {
    message: "only an approval may carry edited arguments",
    path: ["arguments"],
  });

/**
 * `GET /api/sessions/:id/approvals` lists the calls of the session's running turn that wait for a
 * decision; `POST /api/sessions/:id/approvals/:call_id` answers one (decided_by `user`).
 */
export function registerApprovalRoutes(app: Hono, deps: ServerDependencies): void {
  app.get("/api/sessions/:id/approvals", async (c) => {
    const session = await requireSession(deps, c);
    return c.json({ approvals: deps.approvals.list(session.id) });
  });

  app.post("/api/sessions/:id/approvals/:call_id", async (c) => {
    const body = await readJsonBody(c, ApprovalBody, deps.maxBodyBytes);
    const session = await requireSession(deps, c);
    deps.approvals.decide(session.id, c.req.param("call_id"), {
      decision: body.decision,
      decided_by: "user",
      ...(body.arguments === undefined ? {} : { arguments: body.arguments }),
      ...(body.reason === undefined ? {} : { reason: body.reason }),
    });
    return c.json({ call_id: c.req.param("call_id"), decision: body.decision });
  });
}
