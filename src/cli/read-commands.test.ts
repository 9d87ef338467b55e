import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import type { UsageSummary } from "../domain/usage.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { runCli, runCliJson, stderrLines } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

let folder: ReturnType<typeof temporaryDirectory>;
let db: string;
let report: TurnReport;

beforeAll(async () => {
  folder = temporaryDirectory();
  db = join(folder.path, "lab.sqlite3");
  report = await runCliJson<TurnReport>([
    "--db",
    db,
    "run",
    "--approve",
    "all",
    "--title",
    "Flaky tests",
    "search for agent lab and file a ticket about flaky tests",
  ]);
});
afterAll(() => folder.remove());

function withStore<Value>(use: (store: SqliteSessionStore) => Value): Value {
  const store = new SqliteSessionStore(db);
  try {
    return use(store);
  } finally {
    store.close();
  }
}

describe("agent-lab sessions", () => {
  it("prints exactly the store's listSessionPage page with --json", async () => {
    const page = await runCliJson<{ sessions: unknown[]; next_cursor: unknown }>([
      "--db",
      db,
      "sessions",
    ]);
    expect(page).toEqual(withStore((store) => store.listSessionPage({})));
    expect(page.next_cursor).toBeNull();
    expect(page.sessions).toEqual([
      expect.objectContaining({
        id: report.session_id,
        title: "Flaky tests",
        turn_count: 1,
        total_tokens: report.usage.total_tokens,
        last_status: "completed",
        tags: [],
      }),
    ]);
  });

  it("prints a table for people", async () => {
    const result = await runCli(["--db", db, "sessions"]);
    expect(result.status).toBe(0);
    const [header, row] = result.stdout.split("\n");
    expect(header).toMatch(/^ID\s+TITLE\s+TURNS\s+TOKENS\s+UPDATED \(UTC\)$/);
    expect(row).toContain(report.session_id);
    expect(row).toContain("Flaky tests");
  });

  it("reads a missing database as an empty lab without creating it", async () => {
    const missing = join(folder.path, "missing.sqlite3");
    expect(await runCliJson(["--db", missing, "sessions"])).toEqual({
      sessions: [],
      next_cursor: null,
    });
    const result = await runCli(["--db", missing, "sessions"]);
    expect(result.stdout).toMatch(/^No sessions yet in /);
    expect(existsSync(missing)).toBe(false);
  });
});

describe("agent-lab usage", () => {
  it("prints exactly the store's usageSummary record with --json", async () => {
    const summary = await runCliJson(["--db", db, "usage", report.session_id]);
    expect(summary).toEqual(withStore((store) => store.usageSummary(report.session_id)));
  });

  it("prints a per-turn table with the session's totals, cost included", async () => {
    const result = await runCli(["--db", db, "usage", report.session_id]);
    expect(result.status).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`Usage of session ${report.session_id}`);
    expect(lines.find((line) => line.startsWith("TURN"))).toMatch(
      /^TURN\s+STATUS\s+CALLS\s+TOOLS\s+FALLBACKS\s+PROMPT\s+CACHED\s+CACHE WRITE\s+COMPLETION\s+REASONING\s+TOTAL\s+COST\s+TTFT\s+ELAPSED\s+WALL$/,
    );
    expect(lines.find((line) => line.startsWith("1 "))).toMatch(/^1\s+completed\s+4\s+2\s+0\s/);
    // The simulated model is in the price table at zero: an estimate, not the provider's figure.
    expect(lines.find((line) => line.startsWith("total"))).toMatch(
      /^total\s+4\s+2\s+0\s.*\s\$0 est\.\s/,
    );
  });

  it("lists every call under its key, the one `agent-lab call` opens", async () => {
    const result = await runCli(["--db", db, "usage", report.session_id]);
    const lines = result.stdout.split("\n");
    expect(lines).toContain(`Calls (agent-lab call ${report.session_id} KEY shows one)`);
    expect(lines.find((line) => line.startsWith("KEY"))).toMatch(
      /^KEY\s+MODEL \/ TOOL\s+PROMPT\s+CACHED\s+CACHE WRITE\s+COMPLETION\s+REASONING\s+TOTAL\s+COST\s+TTFT\s+ELAPSED\s+FINISH$/,
    );
    const summary = withStore((store) => store.usageSummary(report.session_id));
    for (const call of summary.calls) {
      expect(lines.some((line) => line.startsWith(`${call.metric_key} `))).toBe(true);
    }
    expect(lines.find((line) => line.startsWith("chat:1:1 "))).toMatch(
      /^chat:1:1\s+sim\s.*\$0 est\./,
    );
    expect(lines.find((line) => line.startsWith("tool:1:1:"))).toMatch(/\smock_(search|ticket)\s/);
  });

  it("carries the new per-call fields and cost roll-ups in --json", async () => {
    const summary = await runCliJson<UsageSummary>(["--db", db, "usage", report.session_id]);
    const chat = summary.calls.find((call) => call.metric_key === "chat:1:1");
    expect(chat).toMatchObject({
      reasoning_tokens: 0,
      cache_write_tokens: 0,
      usage_source: expect.any(String),
      cost_usd: null,
      cost_estimated_usd: 0,
      refusal: false,
      finish_reason: expect.any(String),
    });
    expect(summary.session).toMatchObject({
      cost_usd: 0,
      reported_cost_count: 0,
      unpriced_count: 0,
      reasoning_tokens: 0,
      cache_write_tokens: 0,
    });
  });

  it("refuses an unknown session with one line", async () => {
    const result = await runCli(["--db", db, "usage", "no-such-session"]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(stderrLines(result)).toEqual([
      "agent-lab: session not found: no-such-session (no id is or starts with it; agent-lab sessions lists them)",
    ]);
  });
});

describe("agent-lab call", () => {
  it("prints the captured request body as JSON and the raw response", async () => {
    const result = await runCli(["--db", db, "call", report.session_id, "chat:1:1"]);
    expect(result.status).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(
      `Call chat:1:1 of session ${report.session_id} · turn 1 · round 1 · chat_agent`,
    );
    expect(lines.find((line) => line.startsWith("── request body"))).toMatch(
      /^── request body \([\d,]+ bytes\)$/,
    );
    expect(result.stdout).toContain('"messages": [');
    expect(result.stdout).toContain("search for agent lab and file a ticket about flaky tests");
    expect(lines.find((line) => line.startsWith("── raw response"))).toMatch(
      /^── raw response \([\d,]+ bytes\)$/,
    );
    expect(result.stdout).toContain("<event");
  });

  it("prints the stored record with --json", async () => {
    const shown = await runCliJson(["--db", db, "call", report.session_id, "chat:1:1"]);
    expect(shown).toEqual(
      withStore((store) => store.getCallPayload(report.session_id, "chat:1:1")),
    );
  });

  it("says why a call has no payload: an unknown key, a tool execution", async () => {
    const id = report.session_id;
    const unknown = await runCli(["--db", db, "call", id, "chat:9:9"]);
    expect(unknown.status).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(stderrLines(unknown)).toEqual([
      `agent-lab: no payload kept for call chat:9:9 of session ${id}: the session has no call with this metric key (agent-lab usage ${id} lists them in its Calls table, GET /api/sessions/${id}/usage/calls pages through them)`,
    ]);
    const tool = withStore(
      (store) =>
        store.usageSummary(id).calls.find((call) => call.call_kind === "tool_execution")
          ?.metric_key,
    );
    const execution = await runCli(["--db", db, "call", id, String(tool)]);
    expect(execution.status).toBe(1);
    expect(stderrLines(execution)).toEqual([
      `agent-lab: no payload kept for call ${tool} of session ${id}: it is a tool execution; only model calls (chat completions, argument fallbacks) are captured`,
    ]);
  });

  it("says why a model call has no payload: capture off, recorded before payloads, imported", async () => {
    const other = join(folder.path, "reasons.sqlite3");
    const store = new SqliteSessionStore(other);
    try {
      store.createSession({
        title: "off",
        config: { capture: { payloads: "off" } },
        session_id: "off",
      });
      store.startTurn("off", { turn_index: 1, user_message: "hi" });
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      // Recorded by this lab with capture off: it has a finish reason.
      store.appendUsage("off", {
        turn_index: 1,
        round_index: 1,
        usage,
        elapsed_ms: 9,
        metadata: { metric_key: "chat:1:1", finish_reason: "stop" },
      });
      // As an upgraded database holds a call: no finish reason, counts from the endpoint.
      store.appendUsage("off", {
        turn_index: 1,
        round_index: 2,
        usage,
        elapsed_ms: 9,
        metadata: { metric_key: "chat:1:2" },
      });
      // The session `run` made kept its calls; its copy in this file has none.
      const exported = withStore((source) => source.exportSession(report.session_id));
      store.importSession(exported, { session_id: "copy" });
    } finally {
      store.close();
    }
    const reasonOf = async (session: string, key: string) => {
      const result = await runCli(["--db", other, "call", session, key]);
      expect(result.status).toBe(1);
      expect(result.stdout).toBe("");
      return stderrLines(result);
    };
    const before =
      "this call was recorded before the lab kept payloads (an older database) or came with an imported session (exports carry no payloads)";
    expect(await reasonOf("off", "chat:1:1")).toEqual([
      "agent-lab: no payload kept for call chat:1:1 of session off: payload capture was off for this call (the session's capture.payloads is off, or auto with an endpoint that is not on this machine)",
    ]);
    expect(await reasonOf("off", "chat:1:2")).toEqual([
      `agent-lab: no payload kept for call chat:1:2 of session off: ${before}`,
    ]);
    expect(await reasonOf("copy", "chat:1:1")).toEqual([
      `agent-lab: no payload kept for call chat:1:1 of session copy: ${before}`,
    ]);
  });

  it("refuses an unknown session with one line", async () => {
    const result = await runCli(["--db", db, "call", "no-such-session", "chat:1:1"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      "agent-lab: session not found: no-such-session (no id is or starts with it; agent-lab sessions lists them)",
    ]);
  });
});

describe("agent-lab show", () => {
  it("prints { session, messages, audit } with --json", async () => {
    const shown = await runCliJson<Record<string, unknown>>([
      "--db",
      db,
      "show",
      report.session_id,
    ]);
    expect(Object.keys(shown)).toEqual(["session", "messages", "audit"]);
    const expected = withStore((store) => ({
      session: store.getSession(report.session_id),
      messages: store.listMessages(report.session_id),
      audit: store.listAuditLogs(report.session_id),
    }));
    expect(shown).toEqual(expected);
    expect(expected.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
    ]);
  });

  it("prints a readable transcript", async () => {
    const result = await runCli(["--db", db, "show", report.session_id]);
    expect(result.status).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe(`Session ${report.session_id}: Flaky tests`);
    expect(lines[1]).toBe("mode dual_agent · chat agent sim · event agent sim");
    expect(lines).toContain("user: search for agent lab and file a ticket about flaky tests");
    expect(lines).toContain('  → mock_search {"query":"agent lab"}');
    expect(lines.some((line) => line.startsWith("── turn 1 · completed · wall "))).toBe(true);
    expect(result.stdout).toContain("assistant: Here is what the tools returned:");
  });

  it("collapses an answer's reasoning to its length; --reasoning prints it; marks refusals", async () => {
    const thoughtful = join(folder.path, "reasoning.sqlite3");
    const store = new SqliteSessionStore(thoughtful);
    const id = store.createSession({ title: "Thinking" });
    store.startTurn(id, { turn_index: 1, user_message: "2 + 2?" });
    store.appendMessage(id, { turn_index: 1, message: { role: "user", content: "2 + 2?" } });
    store.appendMessage(id, {
      turn_index: 1,
      message: { role: "assistant", content: "4", reasoning: "Two and two.\nThat is four." },
    });
    store.appendMessage(id, {
      turn_index: 1,
      message: { role: "assistant", content: "", refusal: "I won't." },
    });
    store.close();
    const collapsed = (await runCli(["--db", thoughtful, "show", id])).stdout.split("\n");
    expect(collapsed).toContain("  thinking… (26 chars; --reasoning shows it)");
    expect(collapsed).toContain("assistant: 4");
    expect(collapsed).toContain("assistant refused: I won't.");
    expect(collapsed.join("\n")).not.toContain("Two and two.");
    const full = (await runCli(["--db", thoughtful, "show", id, "--reasoning"])).stdout;
    expect(full).toContain("  thinking:\n  │ Two and two.\n  │ That is four.\nassistant: 4");
  });

  it("refuses an unknown session with one line", async () => {
    const result = await runCli(["--db", db, "show", "no-such-session"]);
    expect(result.status).toBe(1);
    expect(stderrLines(result)).toEqual([
      "agent-lab: session not found: no-such-session (no id is or starts with it; agent-lab sessions lists them)",
    ]);
  });
});

describe("help", () => {
  it.each(["run", "sessions", "usage", "call", "show"])(
    "agent-lab %s --help shows an example",
    async (name) => {
      const result = await runCli([name, "--help"]);
      expect(result.status).toBe(0);
      expect(result.stdout).toContain(`Usage: agent-lab ${name}`);
      expect(result.stdout).toMatch(new RegExp(`Examples:\\n {2}\\$ agent-lab ${name}`));
    },
  );
});
