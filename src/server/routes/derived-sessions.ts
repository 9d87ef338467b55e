import type { Hono } from "hono";
import { z } from "zod";
import { WellFormedString } from "../../domain/json-limits.js";
import { parseInput } from "../../domain/validation.js";
import { forkSession } from "../../runtime/session-fork.js";
import { prepareReplay, runReplay } from "../../runtime/session-replay.js";
import { retryableTurn } from "../../runtime/turn-retry.js";
import { readJsonBody } from "../request-body.js";
import type { ServerDependencies } from "../server-dependencies.js";
import { streamSessionRun, streamTurn } from "./turns.js";

const Title = WellFormedString.trim().min(1, "a session needs a title").max(200);
/** Partial lab config, merged over the source's as a JSON Merge Patch, then validated whole. */
const ConfigOverrides = z.record(z.string(), z.unknown());

export const ReplayBody = z.strictObject({
  title: Title.optional(),
  config: ConfigOverrides.optional(),
});

export const ForkBody = ReplayBody.extend({
  turn_index: z.number().int().min(0, "turn_index is 0 or more"),
});

const TurnIndexParam = z.strictObject({
  turn_index: z.coerce
    .number({ error: "turn_index must be a whole number" })
    .int("turn_index must be a whole number")
    .min(1, "turn_index is 1 or more"),
});

/** Refusals name fields of the request body's config, as a new session's do. */
const FIELD_PREFIX = "request body: config.";

/**
 * Sessions made from another: a fork (its history up to a turn, under a new config), a replay
 * (its user messages run again under a new config, streamed) and a retry of a turn that did not
 * complete (a new turn of the same session, streamed like POST /turns).
 */
export function registerDerivedSessionRoutes(app: Hono, deps: ServerDependencies): void {
  const { store } = deps;
  const providers = deps.runTurnDefaults.providers;

  app.post("/api/sessions/:id/fork", async (c) => {
    const body = await readJsonBody(c, ForkBody, deps.maxBodyBytes);
    const session = await forkSession({
      store,
      providers,
      source_id: c.req.param("id"),
      turn_index: body.turn_index,
      title: body.title,
      config: body.config,
      field_prefix: FIELD_PREFIX,
    });
    return c.json({ session }, 201);
  });

  app.post("/api/sessions/:id/replay", async (c) => {
    const body = await readJsonBody(c, ReplayBody, deps.maxBodyBytes);
    const replay = await prepareReplay({
      store,
      providers,
      source_id: c.req.param("id"),
      title: body.title,
      config: body.config,
      field_prefix: FIELD_PREFIX,
    });
    const { models } = deps.runTurnDefaults;
    const approve = deps.runTurnDefaults.approve ?? deps.approvals.approve;
    return streamSessionRun(c, deps, replay.session.id, (signal) =>
      runReplay({ store, providers, replay, signal, approve, models }),
    );
  });

  app.post("/api/sessions/:id/turns/:turn_index/retry", async (c) => {
    const { turn_index } = parseInput(
      TurnIndexParam,
      { turn_index: c.req.param("turn_index") },
      "path",
    );
    const turn = await retryableTurn(store, c.req.param("id"), turn_index);
    return streamTurn(c, deps, c.req.param("id"), { message: turn.user_message });
  });
}
