import Database from "better-sqlite3";
import type { ChatMessage } from "../domain/messages.js";
import { estimateCost, type Price, priceFor } from "../domain/prices.js";
import { tokenUsage } from "../domain/usage.js";
import type { ChatModel, ChatModelPart } from "../providers/chat-model.js";
import { THIS_RUNNER } from "../runtime/turn-lock.js";
import { parseAppendRecords } from "../store/fast-inputs.js";
import { auditRowParams, usageRowParams } from "../store/sqlite/record-batch.js";
import { toMessageRowParams } from "../store/sqlite/rows.js";
import { USAGE_COLUMNS } from "../store/sqlite/statements.js";
import type { AppendAuditOptions, AppendUsageOptions } from "../store/store-inputs.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { ToolRegistry } from "../tools/registry.js";

const SYSTEM =
  "You are a helpful assistant. Use the available tools when they help answer the user, then answer from their results.";

/** What a commit does to the session row: count a turn, move `updated_at`, or nothing. */
type Touch = "count" | "touch" | "none";

/** A transaction's rows as the lab's store takes them, gathered for its checks (`checked`). */
interface Gathered {
  messages: ChatMessage[];
  usage: AppendUsageOptions[];
  audit: AppendAuditOptions[];
}

/** A usage row with every column null: each row names only what it knows. */
const EMPTY_USAGE_ROW = Object.fromEntries(USAGE_COLUMNS.map((column) => [column, null]));

/**
 * The floor the lab's turn loop is measured against: the same model calls, tool calls and rows as
 * a chat_agent_tools turn (turn and user message, nine audit rows with the same details, a usage
 * row per model and tool call with the same columns filled, the round's messages), written with
 * plain prepared statements and one transaction per round (plus one to start the turn; the last
 * round's also ends it), its history kept in memory. Its session rows are the lab's (the title
 * and config text it is given), its turns name the lab's runner, and a call's estimated cost is
 * priced as the lab prices it: a test holds its rows to the lab's. The session's `updated_at` moves when the
 * turn starts and when it ends, not at every round: that is all the lab's records need. No
 * validation (unless `checked`), no events, no capture: what any agent loop that keeps the lab's
 * records must do at least. One connection serves session after session (`startSession`), as one
 * lab process does.
 */
export class HandWrittenLoop {
  readonly #db: Database.Database;
  readonly #tools = new ToolRegistry(createBuiltinTools());
  /** Built once, as any loop would (the lab keeps them per tool registry, tool-definitions.ts). */
  readonly #definitions = this.#tools.definitions();
  #history: ChatMessage[] = [];
  readonly #sql;
  /** Made once, as any loop would: better-sqlite3 builds its wrappers per transaction function. */
  readonly #write;
  #sessionId = "";
  #turn = 0;
  /** While a `checked` loop's transaction runs: its rows, written once checked. */
  #gathered: Gathered | null = null;
  readonly #checked: boolean;
  readonly #session: { title: string; config_json: string };
  /** The price of its model in the built-in table, as the lab prices a call (the sim's is 0). */
  readonly #price: Price | null;

  /**
   * `checked`: each transaction's rows first go through the lab store's own input checks
   * (`parseAppendRecords`, one batch per transaction) and row builders (text repaired, audit
   * details redacted) before the loop's statements write them: the lab's turn against this loop
   * is what the lab costs beyond checking what it stores.
   */
  constructor(
    path: string,
    private readonly model: ChatModel,
    {
      checked = false,
      session,
    }: {
      checked?: boolean;
      /**
       * The title and stored config text of the lab's sessions it is compared with. Its session
       * rows must be theirs: every update of a session row computes the session list's generated
       * columns (mode, models, experiment) from the config text, which costs about 7 µs more on
       * the lab's config than on an empty one, twice a turn.
       */
      session: { title: string; config_json: string };
    },
  ) {
    this.#checked = checked;
    this.#session = session;
    this.#price = priceFor(model.model, {});
    this.#db = new Database(path);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("synchronous = NORMAL");
    this.#sql = {
      session: this.#db.prepare(
        "INSERT INTO sessions (id, title, created_at, updated_at, config_json) VALUES (?, ?, ?, ?, ?)",
      ),
      turn: this.#db.prepare(
        "INSERT INTO turns (session_id, turn_index, user_message, started_at, status, runner) VALUES (?, ?, ?, ?, 'running', ?)",
      ),
      end: this.#db.prepare(
        "UPDATE turns SET completed_at = ?, wall_time_ms = ?, status = 'completed' WHERE session_id = ? AND turn_index = ?",
      ),
      touch: this.#db.prepare("UPDATE sessions SET updated_at = ? WHERE id = ?"),
      // The turn's start also counts it, as the lab's claim does (the session list shows it).
      count: this.#db.prepare(
        "UPDATE sessions SET updated_at = ?, turn_count = turn_count + 1 WHERE id = ?",
      ),
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
    this.#write = this.#db.transaction((write: (now: string) => void, touch: Touch) => {
      const now = new Date().toISOString();
      if (this.#checked) this.#gathered = { messages: [], usage: [], audit: [] };
      write(now);
      const gathered = this.#gathered;
      this.#gathered = null;
      if (gathered !== null) this.#writeChecked(gathered, now);
      if (touch === "count") this.#sql.count.run(now, this.#sessionId);
      else if (touch === "touch") this.#sql.touch.run(now, this.#sessionId);
    });
  }

  /** A new session (its row written now), whose turns the next `turn` calls run. */
  startSession(sessionId: string): void {
    const now = new Date().toISOString();
    const { title, config_json } = this.#session;
    this.#sql.session.run(sessionId, title, now, now, config_json);
    this.#sessionId = sessionId;
    this.#history = [];
    this.#turn = 0;
  }

  close(): void {
    this.#db.close();
  }

  /** One turn; returns how many rounds it took. */
  async turn(message: string): Promise<number> {
    const turnIndex = ++this.#turn;
    const started = performance.now();
    const user: ChatMessage = { role: "user", content: message, tool_calls: [] };
    this.#transaction("count", (now) => {
      this.#sql.turn.run(this.#sessionId, turnIndex, message, now, THIS_RUNNER);
      this.#writeMessage(turnIndex, user, now);
      this.#audit(
        turnIndex,
        null,
        "turn_start",
        {
          mode: "chat_agent_tools",
          chat_model: this.#modelName(),
          event_model: this.#modelName(),
          simulated: this.model.simulated,
          tools: this.#tools.names(),
          max_rounds: 6,
          system_prompt: SYSTEM,
        },
        now,
      );
    });
    this.#history.push(user);
    let round = 0;
    for (;;) {
      round++;
      const reply = await this.#call(round);
      const replies: ChatMessage[] = [];
      const executed: {
        call: (typeof reply.calls)[number];
        arguments: Record<string, unknown>;
        ok: boolean;
        latency_ms: number;
        chars: number;
      }[] = [];
      for (const call of reply.calls) {
        const args = JSON.parse(call.raw_arguments);
        const result = await this.#tools.run(call.name, args);
        const content = JSON.stringify(result.ok ? result.value : { error: result.error });
        replies.push({
          role: "tool",
          content,
          name: call.name,
          tool_call_id: call.id,
          tool_calls: [],
        });
        executed.push({
          call,
          arguments: args,
          ok: result.ok,
          latency_ms: result.latency_ms,
          chars: content.length,
        });
      }
      const assistant: ChatMessage = {
        role: "assistant",
        content: reply.text,
        tool_calls: executed.map(({ call, arguments: args }) => ({
          id: call.id,
          name: call.name,
          arguments: args,
          raw_arguments: call.raw_arguments,
        })),
      };
      const names = reply.calls.map((call) => call.name);
      const last = reply.calls.length === 0;
      this.#transaction(last ? "touch" : "none", (now) => {
        this.#audit(
          turnIndex,
          round,
          "chat_agent_request",
          {
            model: this.#modelName(),
            simulated: this.model.simulated,
            messages: reply.sent,
            tools: this.#tools.names(),
          },
          now,
        );
        const { finish } = reply;
        this.#audit(
          turnIndex,
          round,
          "chat_agent_response",
          {
            finish_reason: finish.finish_reason,
            response_model: finish.response_model,
            ttft_ms: finish.ttft_ms,
            elapsed_ms: finish.elapsed_ms,
            attempts: finish.attempts,
            usage: reply.usage,
            tool_calls: names,
          },
          now,
        );
        this.#usage(turnIndex, round, reply.usage, now, {
          ttft_ms: finish.ttft_ms,
          elapsed_ms: finish.elapsed_ms,
          agent: "chat_agent",
          call_kind: "chat_completion",
          metric_key: `chat:${turnIndex}:${round}`,
          response_model: finish.response_model,
          response_id: finish.response_id,
          finish_reason: finish.finish_reason,
          // Priced as the lab prices a call: by its agent's model in the price table.
          cost_estimated_usd: estimateCost(reply.usage, this.#price),
        });
        for (const { call, arguments: args, ok, latency_ms, chars } of executed) {
          const named = { event_id: call.id, event_name: call.name };
          this.#audit(
            turnIndex,
            round,
            "event_detected",
            { ...named, raw_arguments: call.raw_arguments },
            now,
          );
          this.#audit(
            turnIndex,
            round,
            "tool_start",
            { ...named, arguments: args, used_fallback: false },
            now,
          );
          this.#usage(turnIndex, round, tokenUsage(), now, {
            ...named,
            elapsed_ms: latency_ms,
            tool_latency_ms: latency_ms,
            agent: "event_kernel",
            call_kind: "tool_execution",
            metric_key: `tool:${turnIndex}:${round}:${call.id}`,
          });
          this.#audit(
            turnIndex,
            round,
            "tool_end",
            { ...named, ok, latency_ms, result_chars: chars },
            now,
          );
        }
        for (const entry of [assistant, ...replies]) this.#writeMessage(turnIndex, entry, now);
        if (last) {
          const wall = performance.now() - started;
          this.#audit(
            turnIndex,
            null,
            "turn_end",
            { status: "completed", wall_time_ms: wall },
            now,
          );
          this.#sql.end.run(now, wall, this.#sessionId, turnIndex);
        }
      });
      this.#history.push(assistant, ...replies);
      if (last) break;
    }
    return round;
  }

  async #call(round: number) {
    const messages: ChatMessage[] = [
      { role: "system", content: SYSTEM, tool_calls: [] },
      ...this.#history,
    ];
    let text = "";
    let usage = tokenUsage();
    let finish: Extract<ChatModelPart, { type: "finish" }> | null = null;
    const calls: { id: string; name: string; raw_arguments: string }[] = [];
    for await (const part of this.model.stream({
      messages,
      tools: this.#definitions,
      conversation_id: this.#sessionId,
    })) {
      if (part.type === "text-delta") text += part.text;
      else if (part.type === "tool-call") calls.push(part);
      else if (part.type === "usage") usage = part.usage;
      else if (part.type === "finish") finish = part;
    }
    if (finish === null) throw new Error("the model ended its stream without a finish part");
    return { text, calls, usage, finish, sent: messages.length, round };
  }

  #modelName(): string {
    return `${this.model.provider}:${this.model.model}`;
  }

  /** One commit, moving the session's `updated_at` with it (and its turn count) or not. */
  #transaction(touch: Touch, write: (now: string) => void): void {
    this.#write.immediate(write, touch);
  }

  #writeMessage(turnIndex: number, message: ChatMessage, now: string): void {
    if (this.#gathered !== null) {
      this.#gathered.messages.push(message);
      return;
    }
    this.#sql.message.run(
      this.#sessionId,
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
    if (this.#gathered !== null) {
      this.#gathered.audit.push({ event, details, turn_index: turnIndex, round_index: round });
      return;
    }
    this.#sql.audit.run(this.#sessionId, turnIndex, round, event, JSON.stringify(details), now);
  }

  #usage(
    turnIndex: number,
    round: number,
    usage: ReturnType<typeof tokenUsage>,
    now: string,
    call: Record<string, unknown>,
  ): void {
    if (this.#gathered !== null) {
      const { ttft_ms, elapsed_ms, ...metadata } = call;
      this.#gathered.usage.push({
        turn_index: turnIndex,
        round_index: round,
        usage,
        ttft_ms: ttft_ms as number | undefined,
        elapsed_ms: elapsed_ms as number,
        metadata,
      });
      return;
    }
    this.#sql.usage.run({
      ...EMPTY_USAGE_ROW,
      session_id: this.#sessionId,
      turn_index: turnIndex,
      round_index: round,
      ...usage,
      created_at: now,
      used_fallback: 0,
      estimated: 0,
      usage_source: "endpoint",
      refusal: 0,
      ...call,
    });
  }

  /**
   * A `checked` transaction's rows: checked as the lab's store checks a round, then written. Every
   * transaction writes the current turn's rows (`#turn`).
   */
  #writeChecked(gathered: Gathered, now: string): void {
    const sessionId = this.#sessionId;
    const batch = parseAppendRecords({
      message_groups: [{ turn_index: this.#turn, messages: gathered.messages }],
      usage: gathered.usage,
      audit: gathered.audit,
    });
    for (const group of batch.message_groups) {
      for (const message of group.messages) {
        const row = toMessageRowParams(sessionId, group.turn_index, message, now);
        this.#sql.message.run(
          sessionId,
          group.turn_index,
          row.role,
          row.content,
          row.name,
          row.tool_call_id,
          row.tool_calls_json,
          now,
        );
      }
    }
    for (const entry of batch.usage) this.#sql.usage.run(usageRowParams(sessionId, entry, now));
    for (const entry of batch.audit) {
      const row = auditRowParams(sessionId, entry, now);
      this.#sql.audit.run(
        sessionId,
        row.turn_index,
        row.round_index,
        row.event,
        row.details_json,
        now,
      );
    }
  }
}
