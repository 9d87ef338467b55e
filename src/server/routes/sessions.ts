import type { Context, Hono } from "hono";
import { z } from "zod";
import {
  CallNotCapturedError,
  missingPayloadReason,
  redactedCallPayload,
} from "../../domain/call-payload-lookup.js";
import {
  InvalidInputError,
  SessionNotFoundError,
  TurnInProgressError,
} from "../../domain/errors.js";
import { WellFormedString } from "../../domain/json-limits.js";
import { PageRequest } from "../../domain/pagination.js";
import type { SessionRecord } from "../../domain/records.js";
import { LabSessionConfig } from "../../domain/session-config.js";
import { SessionQuery } from "../../domain/session-query.js";
import { parseInput } from "../../domain/validation.js";
import { prepareTurn } from "../../runtime/turn-providers.js";
import { readJsonBody } from "../request-body.js";
import { queryOf } from "../request-query.js";
import type { ServerDependencies } from "../server-dependencies.js";

export const CreateSessionBody = z.strictObject({
  title: WellFormedString.trim().min(1, "a session needs a title").max(200),
  /** The full lab config; every field has a default, so `{}` (or none) is a sim session. */
  config: LabSessionConfig.optional(),
});

const Include = z.enum(["experiments"], { error: "include must be experiments" }).optional();

const IncludeQuery = z.strictObject({ include: Include });

/**
 * The session list's query: experiment runs are left out unless the query asks for them
 * (`include=experiments`, an `experiment` id, or `experiments` itself), so one benchmark's hundreds
 * of runs do not bury the sessions people opened; the Experiments page is where runs live.
 */
export function sessionListQuery(query: Record<string, string>): Record<string, string> {
  const { include, ...rest } = query;
  const included = parseInput(IncludeQuery, { include }, "query").include;
  // Asked for in two words, or for runs it then leaves out: refused rather than one word winning.
  if (rest.experiments !== undefined) {
    if (included !== undefined) {
      throw new InvalidInputError(
        "query: include and experiments say the same thing; give one of them (experiments=include, exclude or only)",
      );
    }
    if (rest.experiment !== undefined && rest.experiments === "exclude") {
      throw new InvalidInputError(
        "query: experiment names an experiment's runs, and experiments=exclude leaves every run out; drop one of them",
      );
    }
    return rest;
  }
  const shown = included === "experiments" || rest.experiment !== undefined ? "include" : "exclude";
  return { experiments: shown, ...rest };
}

/** `limit` and `cursor` of a paged list's query string; a bad one is a 400 naming it. */
function pageRequest(c: Context): PageRequest {
  return parseInput(PageRequest, queryOf(c), "query");
}

/** The session of the route's `:id`, or a 404. */
export async function requireSession(deps: ServerDependencies, c: Context): Promise<SessionRecord> {
  const id = c.req.param("id") ?? "";
  const session = await deps.store.getSession(id);
  if (session === null) throw new SessionNotFoundError(id);
  return session;
}

/**
 * Builds what a turn would build from the config (models, tools), so a config whose every turn
 * would fail (an unknown tool, a bad model string or option) is refused before it is stored.
 */
async function checkRunnable(config: LabSessionConfig, deps: ServerDependencies): Promise<void> {
  await prepareTurn(config, deps.runTurnDefaults.providers, {
    field_prefix: "request body: config.",
  });
}

export function registerSessionRoutes(app: Hono, deps: ServerDependencies): void {
  const { store } = deps;

  // Query parameters are checked here with the store's own schemas, so a bad one is a 400 that
  // names it ("query: limit: …") before anything is read.
  app.get("/api/sessions", async (c) => {
    const query = parseInput(SessionQuery, sessionListQuery(queryOf(c)), "query");
    const page = await store.listSessionPage(query);
    return c.json({ sessions: page.sessions, next_cursor: page.next_cursor });
  });

  app.post("/api/sessions", async (c) => {
    const body = await readJsonBody(c, CreateSessionBody, deps.maxBodyBytes);
    const config = body.config ?? LabSessionConfig.parse({});
    await checkRunnable(config, deps);
    const id = await store.createSession({ title: body.title, config });
    return c.json({ session: await store.getSession(id) }, 201);
  });

  app.get("/api/sessions/:id", async (c) => {
    const session = await requireSession(deps, c);
    return c.json({ session, turns: await store.listTurns(session.id) });
  });

  app.delete("/api/sessions/:id", async (c) => {
    const id = c.req.param("id");
    // Deleting under a running turn would leave the turn writing into nothing.
    if (deps.turns.has(id)) throw new TurnInProgressError(id, null, null);
    await store.deleteSession(id);
    return c.body(null, 204);
  });

  app.get("/api/sessions/:id/turns", async (c) => {
    const page = await store.listTurnPage(c.req.param("id"), pageRequest(c));
    return c.json({ turns: page.items, next_cursor: page.next_cursor });
  });

  app.get("/api/sessions/:id/messages", async (c) => {
    const page = await store.listMessagePage(c.req.param("id"), pageRequest(c));
    return c.json({ messages: page.items, next_cursor: page.next_cursor });
  });

  app.get("/api/sessions/:id/audit", async (c) => {
    const page = await store.listAuditPage(c.req.param("id"), pageRequest(c));
    return c.json({ audit: page.items, next_cursor: page.next_cursor });
  });

  // Roll-ups only: the calls are paged below, so no answer grows with a session's call count.
  app.get("/api/sessions/:id/usage", async (c) => {
    const session = await requireSession(deps, c);
    return c.json(await store.usageRollups(session.id));
  });

  app.get("/api/sessions/:id/usage/calls", async (c) => {
    const page = await store.listUsageCalls(c.req.param("id"), pageRequest(c));
    return c.json({ calls: page.items, next_cursor: page.next_cursor });
  });

  app.get("/api/sessions/:id/calls/:metric_key", async (c) => {
    const session = await requireSession(deps, c);
    const metricKey = c.req.param("metric_key");
    const payload = await store.getCallPayload(session.id, metricKey);
    if (payload === null) {
      const call = await store.findUsageCall(session.id, metricKey);
      throw new CallNotCapturedError(
        session.id,
        metricKey,
        missingPayloadReason(session, call === null ? [] : [call], metricKey),
      );
    }
    return c.json(redactedCallPayload(payload));
  });
}
