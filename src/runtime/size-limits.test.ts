import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { completionChunk, sseEvent, streamReply } from "../../test/fake-openai-server.js";
import { answerRound, fakeServerModel, toolRound } from "../../test/runtime/scripted-turns.js";
import { collectTurn, slowTool, useServerLab } from "../../test/runtime/turn-harness.js";
import type { LabSessionConfigInput } from "../domain/session-config.js";
import type { Tool } from "../tools/tool.js";

const CAP = 10_000;
/** No audit entry may hold more than a small preview of a payload. */
const AUDIT_ROW_BOUND = 4_000;

/** The largest stored message and audit entry, measured in the file itself. */
function storedSizes(path: string, sessionId: string) {
  const db = new Database(path, { readonly: true });
  try {
    const size = (sql: string) =>
      (db.prepare(sql).get(sessionId) as { size: number | null }).size ?? 0;
    return {
      content: size("SELECT MAX(length(content)) AS size FROM messages WHERE session_id = ?"),
      tool_calls: size(
        "SELECT MAX(length(tool_calls_json)) AS size FROM messages WHERE session_id = ?",
      ),
      audit: size("SELECT MAX(length(details_json)) AS size FROM audit_logs WHERE session_id = ?"),
    };
  } finally {
    db.close();
  }
}

describe("size limits", () => {
  const lab = useServerLab();

  const config = (limits: LabSessionConfigInput["limits"]): LabSessionConfigInput => ({
    tool_invocation_mode: "chat_agent_tools",
    tools: ["mock_search"],
    limits,
  });

  it("stops a model answer at max_output_chars, stores the start with a marker, and fails the turn clearly", async () => {
    const chunk = "x".repeat(10_000);
    // More than the limit, then an open stream that never ends: only the lab closing it ends it.
    lab.server.enqueue(
      streamReply(
        [
          sseEvent(completionChunk({ role: "assistant", content: "" })),
          ...Array.from({ length: 100 }, () => sseEvent(completionChunk({ content: chunk }))),
        ],
        { ending: "stall" },
      ),
    );
    const turn = await collectTurn({
      store: lab.store,
      session_id: "big-answer",
      config: config({ max_output_chars: CAP }),
      message: "say a lot",
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(turn.end?.status).toBe("failed");
    expect(turn.events).toContainEqual(
      expect.objectContaining({ type: "error", code: "output_limit" }),
    );
    // The call was stopped, not read to its end: its connection is closed.
    await lab.server.requests.at(-1)?.closed;
    const assistant = lab.store.listMessages("big-answer").find((m) => m.role === "assistant");
    expect(assistant?.content.startsWith("x".repeat(CAP))).toBe(true);
    expect(assistant?.content).toMatch(/…\[cut: model output over 10000 characters/);
    const sizes = storedSizes(lab.path, "big-answer");
    expect(sizes.content).toBeLessThan(CAP + 200);
    expect(sizes.audit).toBeLessThan(AUDIT_ROW_BOUND);
    // The call that was stopped still counts, as an estimate.
    expect(lab.store.usageSummary("big-answer").calls).toMatchObject([
      { metric_key: "chat:1:1", estimated: true },
    ]);
  });

  it("refuses tool arguments over max_tool_argument_chars without running the tool, and never copies them to the audit log", async () => {
    const tool = slowTool({ name: "mock_search", delay_ms: 1 });
    const huge = JSON.stringify({ query: "q".repeat(200_000) });
    lab.server.enqueue(
      toolRound("chat_agent_tools", [{ id: "call_1", name: "mock_search", arguments: huge }]),
      answerRound("The search was refused."),
    );
    const turn = await collectTurn({
      store: lab.store,
      session_id: "big-args",
      config: config({ max_tool_argument_chars: CAP }),
      message: "search for a lot",
      tools: [tool as Tool],
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(turn.end?.status).toBe("completed");
    expect(tool.calls).toHaveLength(0);
    const messages = lab.store.listMessages("big-args");
    const reply = messages.find((m) => m.role === "tool");
    expect(reply?.content).toMatch(
      /over limits\.max_tool_argument_chars \(10000\): the tool was not run/,
    );
    const call = messages.find((m) => m.tool_calls.length > 0)?.tool_calls[0];
    expect(call?.raw_arguments.length).toBeLessThan(CAP + 200);
    expect(call?.raw_arguments).toMatch(/…\[cut: tool arguments over 10000 characters/);
    const sizes = storedSizes(lab.path, "big-args");
    expect(sizes.tool_calls).toBeLessThan(CAP + 500);
    expect(sizes.audit).toBeLessThan(AUDIT_ROW_BOUND);
    const detected = lab.store.listAuditLogs("big-args").find((e) => e.event === "event_detected");
    expect(detected?.details.raw_arguments).toMatchObject({
      omitted: true,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it("cuts a tool result over max_tool_result_chars with a marker", async () => {
    const tool: Tool = {
      ...slowTool({ name: "mock_search" }),
      execute: async () => ({ text: "r".repeat(100_000) }),
    };
    lab.server.enqueue(
      toolRound("chat_agent_tools", [
        { id: "call_1", name: "mock_search", arguments: '{"query":"a"}' },
      ]),
      answerRound("Got it."),
    );
    const turn = await collectTurn({
      store: lab.store,
      session_id: "big-result",
      config: config({ max_tool_result_chars: 5_000 }),
      message: "search",
      tools: [tool],
      models: { chat: fakeServerModel(lab.server) },
    });
    expect(turn.end?.status).toBe("completed");
    const reply = lab.store.listMessages("big-result").find((m) => m.role === "tool");
    expect(reply?.content.length).toBeLessThan(5_200);
    expect(reply?.content).toMatch(
      /…\[cut: tool result over 5000 characters, \d+ more not stored\]$/,
    );
    expect(storedSizes(lab.path, "big-result").audit).toBeLessThan(AUDIT_ROW_BOUND);
  });

  it("refuses a bad limits config, naming the field", async () => {
    const turn = await collectTurn({
      store: lab.store,
      config: { limits: { max_output_chars: 0 } },
      message: "hi",
    });
    expect(String(turn.error)).toMatch(/limits\.max_output_chars/);
  });
});
