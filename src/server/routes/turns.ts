import type { Hono } from "hono";
import { z } from "zod";
import { WellFormedString } from "../../domain/json-limits.js";
import { ToolInvocationMode } from "../../domain/session-config.js";
import { runTurn } from "../../runtime/run-turn.js";
import { readJsonBody } from "../request-body.js";
import type { ServerDependencies } from "../server-dependencies.js";
import { streamTurnEvents } from "../sse.js";
import { requireSession } from "./sessions.js";

export const TurnBody = z.strictObject({
  message: WellFormedString.trim().min(1, "the message is empty"),
  /** The mode the client expects; a session locked to the other one → 409 session_mode_mismatch. */
  tool_invocation_mode: ToolInvocationMode.optional(),
});

/**
 * `POST /api/sessions/:id/turns` runs one turn and streams its events. The turn is started and its
 * first event awaited before the response is committed to SSE, so a refusal (unknown session, a
 * turn already running, a config that cannot run) is still a plain JSON error with its status.
 */
export function registerTurnRoutes(app: Hono, deps: ServerDependencies): void {
  app.post("/api/sessions/:id/turns", async (c) => {
    const body = await readJsonBody(c, TurnBody, deps.maxBodyBytes);
    const session = await requireSession(deps, c);
    const turn = deps.turns.start(session.id);
    const request = c.req.raw.signal;
    const onRequestAbort = () => turn.abort(new Error("the client disconnected"));
    let streaming = false;
    try {
      request.addEventListener("abort", onRequestAbort, { once: true });
      const { providers, models } = deps.runTurnDefaults;
      const events = runTurn({
        providers,
        ...(models !== undefined ? { models } : {}),
        store: deps.store,
        session_id: session.id,
        message: body.message,
        ...(body.tool_invocation_mode === undefined
          ? {}
          : { config: { tool_invocation_mode: body.tool_invocation_mode } }),
        signal: turn.signal,
        // Calls needing approval wait for an answer through the approvals routes.
        approve: deps.runTurnDefaults.approve ?? deps.approvals.approve,
      });
      const first = await events.next();
      if (first.done) throw new Error("the turn ended without reporting anything");
      streaming = true;
      return streamTurnEvents(c, first.value, events, {
        onDisconnect: onRequestAbort,
        onEnd: () => {
          request.removeEventListener("abort", onRequestAbort);
          turn.finish();
        },
        onError: (error) => deps.reportError(`turn of session ${session.id}`, error),
        heartbeatMs: deps.heartbeatMs,
      });
    } finally {
      if (!streaming) {
        request.removeEventListener("abort", onRequestAbort);
        turn.finish();
      }
    }
  });
}
