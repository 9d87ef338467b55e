/**
 * The same two-turn conversation on the simulated model gives the same usage per call whichever
 * face ran it: `agent-lab chat` (one process, one model instance for both turns), `agent-lab run`
 * (one process per turn) and the HTTP API (a model built per turn). The sim's cached tokens are a
 * function of the request alone, so they agree too. Timings differ and are left out. (The web UI
 * part of this comparison lives with the UI's tests.)
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshLab, runCli } from "../../src/cli/test-fixtures.js";
import type { ToolInvocationMode } from "../../src/domain/session-config.js";
import { callCost, type UsageCallRecord, type UsageSummary } from "../../src/domain/usage.js";
import { startTestServer } from "../../src/server/test-fixtures.js";
import { SqliteSessionStore } from "../../src/store/sqlite/sqlite-session-store.js";

const TURNS = ["search for sqlite wal mode", "thanks! and what is 10 / 4?"] as const;

/** The sim thinks aloud too, so reasoning tokens are compared as well. */
const configOf = (mode: ToolInvocationMode) => ({
  tool_invocation_mode: mode,
  chat_agent: { model: "sim", options: { reasoning: true } },
});

/** What must agree across faces: everything about a call but its timing, ids and row order. */
function comparable(call: UsageCallRecord) {
  return {
    metric_key: call.metric_key,
    turn_index: call.turn_index,
    round_index: call.round_index,
    agent: call.agent,
    call_kind: call.call_kind,
    prompt_tokens: call.prompt_tokens,
    completion_tokens: call.completion_tokens,
    total_tokens: call.total_tokens,
    cached_tokens: call.cached_tokens,
    reasoning_tokens: call.reasoning_tokens,
    cache_write_tokens: call.cache_write_tokens,
    cost: callCost(call),
    usage_source: call.usage_source,
    estimated: call.estimated,
    response_model: call.response_model,
    finish_reason: call.finish_reason,
  };
}

const comparableSummary = (summary: UsageSummary) =>
  summary.calls
    .map(comparable)
    .sort((left, right) => String(left.metric_key).localeCompare(String(right.metric_key)));

function readUsage(db: string, sessionId: string): UsageSummary {
  const store = new SqliteSessionStore(db);
  try {
    return store.usageSummary(sessionId);
  } finally {
    store.close();
  }
}

describe.each(["chat_agent_tools", "dual_agent"] as const)(
  "usage of one conversation across faces, %s",
  (mode) => {
    const lab = freshLab();

    it("chat (stdin), run (two processes) and the HTTP API record identical usage per call", async () => {
      const configFile = join(lab.folder, "config.json");
      writeFileSync(configFile, JSON.stringify(configOf(mode)));
      const common = ["--config", configFile, "--approve", "none"];

      const chat = await runCli(
        ["--db", lab.db, "chat", "--session", "chat", "--new", ...common],
        {},
        `${TURNS.join("\n")}\n`,
      );
      expect(chat.status, chat.stderr).toBe(0);

      for (const [index, message] of TURNS.entries()) {
        const create = index === 0 ? ["--new"] : [];
        const run = await runCli([
          "--db",
          lab.db,
          "run",
          "--session",
          "run",
          ...create,
          ...common,
          message,
        ]);
        expect(run.status, run.stderr).toBe(0);
      }

      const server = await startTestServer();
      let api: UsageSummary;
      try {
        const created = await server.api("/api/sessions", {
          method: "POST",
          json: { title: "api", config: configOf(mode) },
        });
        expect(created.status).toBe(201);
        const { session } = (await created.json()) as { session: { id: string } };
        for (const message of TURNS) {
          const turn = await server.api(`/api/sessions/${session.id}/turns`, {
            method: "POST",
            json: { message },
          });
          expect(turn.status).toBe(200);
          expect(await turn.text()).toContain('"status":"completed"');
        }
        const usage = await server.api(`/api/sessions/${session.id}/usage`);
        expect(usage.status).toBe(200);
        // /usage answers the roll-ups; the calls are a page of /usage/calls (one page holds them).
        const calls = await server.api(`/api/sessions/${session.id}/usage/calls?limit=500`);
        expect(calls.status).toBe(200);
        const page = (await calls.json()) as { calls: UsageSummary["calls"]; next_cursor: null };
        expect(page.next_cursor).toBeNull();
        api = { ...((await usage.json()) as Omit<UsageSummary, "calls">), calls: page.calls };
      } finally {
        await server.close();
      }

      const viaChat = comparableSummary(readUsage(lab.db, "chat"));
      const viaRun = comparableSummary(readUsage(lab.db, "run"));
      const viaApi = comparableSummary(api);
      // Two turns: a tool round and an answer, then one answer (and the tool executions).
      expect(viaChat.filter((call) => call.call_kind === "chat_completion")).toHaveLength(3);
      expect(viaRun).toEqual(viaChat);
      expect(viaApi).toEqual(viaChat);

      // Not trivially equal: turn 2 reads the cache, every call thought, and the sim is priced at 0.
      const turn2 = viaChat.find((call) => call.metric_key === "chat:2:1");
      expect(turn2?.cached_tokens).toBeGreaterThan(0);
      for (const call of viaChat.filter((each) => each.call_kind === "chat_completion")) {
        expect(call.reasoning_tokens).toBeGreaterThan(0);
        expect(call.cost).toEqual({ usd: 0, source: "estimated" });
        expect(call).toMatchObject({ usage_source: "endpoint", response_model: "sim" });
      }
    });
  },
);
