import type { Context, Hono } from "hono";
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
    return streamTurn(c, deps, session.id, body);
  });
}

/** Runs one turn of a stored session as the response's event stream (see above). */
export function streamTurn(
  c: Context,
  deps: ServerDependencies,
  sessionId: string,
  body: z.output<typeof TurnBody>,
): Promise<Response> {
  const { providers, models } = deps.runTurnDefaults;
  return streamSessionRun(c, deps, sessionId, (signal) =>
    runTurn({
      providers,
      ...(models !== undefined ? { models } : {}),
      store: deps.store,
      session_id: sessionId,
      message: body.message,
      ...(body.tool_invocation_mode === undefined
        ? {}
        : { config: { tool_invocation_mode: body.tool_invocation_mode } }),
      signal,
      // Calls needing approval wait for an answer through the approvals routes.
      approve: deps.runTurnDefaults.approve ?? deps.approvals.approve,
    }),
  );
}

/**
 * Runs work on a session (a turn, a replay's turns) as the response's event stream: the session
 * is claimed for the run, the first event is awaited before the response is committed (a refusal
 * is still a JSON error), and a client that goes away cancels the run, which is still stored.
 */
export async function streamSessionRun<Event extends { type: string }>(
  c: Context,
  deps: ServerDependencies,
  sessionId: string,
  start: (signal: AbortSignal) => AsyncIterator<Event>,
): Promise<Response> {
  const turn = deps.turns.start(sessionId);
  const request = c.req.raw.signal;
  const onRequestAbort = () => turn.abort(new Error("the client disconnected"));
  let streaming = false;
  try {
    request.addEventListener("abort", onRequestAbort, { once: true });
    const events = start(turn.signal);
    const first = await events.next();
    if (first.done) throw new Error("the run ended without reporting anything");
    streaming = true;
    return streamTurnEvents(c, first.value, events, {
      onDisconnect: onRequestAbort,
      onEnd: () => {
        request.removeEventListener("abort", onRequestAbort);
        turn.finish();
      },
      onError: (error) => deps.reportError(`turn of session ${sessionId}`, error),
      heartbeatMs: deps.heartbeatMs,
    });
  } finally {
    if (!streaming) {
      request.removeEventListener("abort", onRequestAbort);
      turn.finish();
    }
  }
}
