import Database from "better-sqlite3";
import type { ChatMessage } from "../domain/messages.js";
import { tokenUsage } from "../domain/usage.js";
import type { ChatModel } from "../providers/chat-model.js";
import { USAGE_COLUMNS } from "../store/sqlite/statements.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { ToolRegistry } from "../tools/registry.js";

const SYSTEM =
  "You are a helpful assistant. Use the available tools when they help answer the user, then answer from their results.";

/**
 * The floor the lab's turn loop is measured against: the same model calls, tool calls and rows as
 * a chat_agent_tools turn (turn and user message, nine audit rows, a usage row per model and tool
 * call, the round's messages), written with plain prepared statements and one transaction per
 * round (plus one to start the turn and one to end it), its history kept in memory. No
 * validation, no events, no capture: what any agent loop must do at least.
 */
export class HandWrittenLoop {
  readonly #db: Database.Database;
  readonly #tools = new ToolRegistry(createBuiltinTools());
  readonly #history: ChatMessage[] = [];
  readonly #sql;
  #turn = 0;

  constructor(
    path: string,
    readonly sessionId: string,
    private readonly model: ChatModel,
  ) {
    this.#db = new Database(path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = NORMAL");
    const now = new Date().toISOString();
    this.#db
      .prepare(
        "INSERT INTO sessions (id, title, created_at, updated_at, config_json) VALUES (?, ?, ?, ?, '{}')",
      )
      .run(sessionId, "hand-written loop", now, now);
    this.#sql = {
      turn: this.#db.prepare(
        "INSERT INTO turns (session_id, turn_index, user_message, started_at, status, runner) VALUES (?, ?, ?, ?, 'running', 'bench')",
      ),
      end: this.#db.prepare(
        "UPDATE turns SET completed_at = ?, wall_time_ms = ?, status = 'completed' WHERE session_id = ? AND turn_index = ?",
      ),
      touch: this.#db.prepare("UPDATE sessions SET updated_at = ? WHERE id = ?"),
      message: this.#db.prepare(
        "INSERT INTO messages (session_id, turn_index, role, content, name, tool_call_id, tool_calls_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      audit: this.#db.prepare(
        "INSERT INTO audit_logs (session_id, turn_index, round_index, event, details_json, created_at) VALUES (?, ?, ?, ?, ?, ?)",
      ),
      usage: this.#db.prepare(
        `INSERT INTO usage_stats (${USAGE_COLUMNS.join(", ")}) VALUES (${USAGE_COLUMNS.map((column) => `@${column}`).join(", ")})`,
      ),
    };
  }

  close(): void {
    this.#db.close();
  }

  /** One turn; returns how many rounds it took. */
  async turn(message: string): Promise<number> {
    const turnIndex = ++this.#turn;
    const started = performance.now();
    const user: ChatMessage = { role: "user", content: message, tool_calls: [] };
    this.#transaction((now) => {
      this.#sql.turn.run(this.sessionId, turnIndex, message, now);
      this.#writeMessage(turnIndex, user, now);
      this.#audit(turnIndex, null, "turn_start", { tools: this.#tools.names() }, now);
    });
    this.#history.push(user);
    let round = 0;
    for (;;) {
      round++;
      const reply = await this.#call(round);
      const replies: ChatMessage[] = [];
      const executed: { id: string; name: string; ok: boolean; latency_ms: number }[] = [];
      for (const call of reply.calls) {
        const result = await this.#tools.run(call.name, JSON.parse(call.raw_arguments));
        const content = JSON.stringify(result.ok ? result.value : { error: result.error });
        replies.push({
          role: "tool",
          content,
          name: call.name,
          tool_call_id: call.id,
          tool_calls: [],
        });
        executed.push({
          id: call.id,
          name: call.name,
          ok: result.ok,
          latency_ms: result.latency_ms,
        });
      }
      const assistant: ChatMessage = {
        role: "assistant",
        content: reply.text,
        tool_calls: reply.calls.map((call) => ({
          ...call,
          arguments: JSON.parse(call.raw_arguments),
        })),
      };
      this.#transaction((now) => {
        this.#audit(turnIndex, round, "chat_agent_request", { messages: reply.sent }, now);
        this.#audit(turnIndex, round, "chat_agent_response", { usage: reply.usage }, now);
        this.#usage(turnIndex, round, `chat:${turnIndex}:${round}`, reply.usage, now);
        for (const call of executed) {
          this.#audit(turnIndex, round, "event_detected", { event_id: call.id }, now);
          this.#audit(turnIndex, round, "tool_start", { event_id: call.id }, now);
          this.#usage(turnIndex, round, `tool:${turnIndex}:${round}:${call.id}`, tokenUsage(), now);
          this.#audit(turnIndex, round, "tool_end", { ok: call.ok }, now);
        }
        for (const entry of [assistant, ...replies]) this.#writeMessage(turnIndex, entry, now);
      });
      this.#history.push(assistant, ...replies);
      if (reply.calls.length === 0) break;
    }
    this.#transaction((now) => {
      const wall = performance.now() - started;
      this.#audit(turnIndex, null, "turn_end", { status: "completed", wall_time_ms: wall }, now);
      this.#sql.end.run(now, wall, this.sessionId, turnIndex);
    });
    return round;
  }

  async #call(round: number) {
    const messages: ChatMessage[] = [
      { role: "system", content: SYSTEM, tool_calls: [] },
      ...this.#history,
    ];
    let text = "";
    let usage = tokenUsage();
    const calls: { id: string; name: string; raw_arguments: string }[] = [];
    for await (const part of this.model.stream({
      messages,
      tools: this.#tools.definitions(),
      conversation_id: this.sessionId,
    })) {
      if (part.type === "text-delta") text += part.text;
      else if (part.type === "tool-call") calls.push(part);
      else if (part.type === "usage") usage = part.usage;
    }
    return { text, calls, usage, sent: messages.length, round };
  }

  #transaction(write: (now: string) => void): void {
    this.#db
      .transaction(() => {
        const now = new Date().toISOString();
        write(now);
        this.#sql.touch.run(now, this.sessionId);
      })
      .immediate();
  }

  #writeMessage(turnIndex: number, message: ChatMessage, now: string): void {
    this.#sql.message.run(
      this.sessionId,
      turnIndex,
      message.role,
      message.content,
      message.name ?? null,
      message.tool_call_id ?? null,
      JSON.stringify(message.tool_calls),
      now,
    );
  }

  #audit(
    turnIndex: number,
    round: number | null,
    event: string,
    details: Record<string, unknown>,
    now: string,
  ): void {
    this.#sql.audit.run(this.sessionId, turnIndex, round, event, JSON.stringify(details), now);
  }

  #usage(
    turnIndex: number,
    round: number,
    metricKey: string,
    usage: ReturnType<typeof tokenUsage>,
    now: string,
  ): void {
    this.#sql.usage.run({
      ...Object.fromEntries(USAGE_COLUMNS.map((column) => [column, null])),
      session_id: this.sessionId,
      turn_index: turnIndex,
      round_index: round,
      ...usage,
      elapsed_ms: 0,
      created_at: now,
      agent: metricKey.startsWith("tool") ? "event_kernel" : "chat_agent",
      call_kind: metricKey.startsWith("tool") ? "tool_execution" : "chat_completion",
      used_fallback: 0,
      metric_key: metricKey,
      estimated: 0,
      usage_source: "endpoint",
      refusal: 0,
    });
  }
}
