import type { TurnEvent, TurnStatus } from "../domain/turn-events.js";
import type { TurnUsageRollup } from "../domain/usage.js";

/** One tool call of the turn as it finally ran: repaired arguments and its result. */
export interface ToolCallReport {
  id: string;
  round_index: number;
  name: string;
  arguments: Record<string, unknown>;
  raw_arguments: string;
  /** null when the turn ended before the call did. */
  ok: boolean | null;
  used_fallback: boolean;
  latency_ms: number | null;
  /** What went back to the model (JSON text); null when the call never finished. */
  content: string | null;
}

/** What `run --json` prints: one object per turn. */
export interface TurnReport {
  session_id: string;
  turn_index: number;
  mode: string;
  simulated: boolean;
  status: TurnStatus;
  answer: string;
  tool_calls: ToolCallReport[];
  usage: TurnUsageRollup;
  /** The turn's time to first token: its first chat completion's. */
  ttft_ms: number | null;
  wall_time_ms: number;
  error: { code: string; message: string } | null;
}

/** Folds a turn's event stream into its report, as the events arrive. */
export class TurnReportBuilder {
  #start: Extract<TurnEvent, { type: "turn_start" }> | null = null;
  #end: Extract<TurnEvent, { type: "turn_end" }> | null = null;
  readonly #calls = new Map<string, ToolCallReport>();
  #ttft: number | null = null;
  #error: { code: string; message: string } | null = null;

  add(event: TurnEvent): void {
    switch (event.type) {
      case "turn_start":
        this.#start = event;
        break;
      case "tool_call":
        this.#calls.set(event.event.id, {
          id: event.event.id,
          round_index: event.round_index,
          name: event.event.name,
          arguments: event.event.arguments,
          raw_arguments: event.event.raw_arguments,
          ok: null,
          used_fallback: false,
          latency_ms: null,
          content: null,
        });
        break;
      case "fallback_start": {
        const call = this.#calls.get(event.event_id);
        if (call) call.used_fallback = true;
        break;
      }
      case "fallback_end": {
        const call = this.#calls.get(event.event_id);
        if (call && event.event) {
          call.arguments = event.event.arguments;
          call.raw_arguments = event.event.raw_arguments;
        }
        break;
      }
      case "tool_result": {
        const call = this.#calls.get(event.event_id);
        if (call) {
          call.ok = event.ok;
          call.used_fallback = event.used_fallback;
          call.latency_ms = event.latency_ms;
          call.content = event.content;
        }
        break;
      }
      case "usage":
        if (this.#ttft === null && event.call_kind === "chat_completion") {
          this.#ttft = event.ttft_ms;
        }
        break;
      case "error":
        this.#error = { code: event.code, message: event.message };
        break;
      case "turn_end":
        this.#end = event;
        break;
      // Nothing to report of these: the streamed text and rounds live in the store.
      case "round_start":
      case "text_delta":
      case "reasoning_delta":
      case "refusal_delta":
      case "retry":
      case "approval_required":
      case "approval_decided":
      case "round_end":
        break;
      default:
        // A new event type fails to compile here until the report decides what it keeps.
        event satisfies never;
    }
  }

  get simulated(): boolean {
    return this.#start?.simulated ?? false;
  }

  /** The finished report, or null when the stream ended without a `turn_end`. */
  report(): TurnReport | null {
    const end = this.#end;
    if (end === null) return null;
    return {
      session_id: end.session_id,
      turn_index: end.turn_index,
      mode: this.#start?.mode ?? "",
      simulated: this.simulated,
      status: end.status,
      answer: end.answer,
      tool_calls: [...this.#calls.values()],
      usage: end.usage,
      ttft_ms: this.#ttft,
      wall_time_ms: end.wall_time_ms,
      error: this.#error,
    };
  }
}
