import type { ToolCallEvent } from "../domain/events.js";
import type { ChatMessage } from "../domain/messages.js";
import type { LabSessionConfig, ToolInvocationMode } from "../domain/session-config.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { ChatModel } from "../providers/chat-model.js";
import type { SessionStore } from "../store/session-store.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { EventKernel } from "./event-kernel.js";
import type { TurnRecords } from "./turn-records.js";

/** Everything a round needs, fixed for the turn. */
export interface TurnContext {
  store: SessionStore;
  session_id: string;
  turn_index: number;
  mode: ToolInvocationMode;
  config: LabSessionConfig;
  chat_model: ChatModel;
  event_model: ChatModel;
  tools: ToolRegistry;
  kernel: EventKernel;
  /** Aborted when the turn is cancelled or has failed: models and tools stop on it. */
  signal: AbortSignal;
  /** True when the user cancelled (as opposed to the turn failing). */
  cancelled(): boolean;
  /** Stops the turn's remaining work after a failure. */
  abandon(): void;
  emit(event: TurnEvent): void;
  audit(event: string, details: Record<string, unknown>, round_index?: number): Promise<void>;
  /** The turn's rows, held until the round ends (see TurnRecords). */
  records: TurnRecords;
}

/**
 * What a round has produced so far. The mode fills it while it streams, so that when the round
 * fails or is cancelled half-way the turn can still store the partial text and answer every tool
 * call it had started.
 */
export interface RoundState {
  round_index: number;
  /** User-visible text (event tags removed). */
  text: string;
  /** The chat agent's thinking and refusal, kept beside the text on the assistant message. */
  reasoning: string;
  refusal: string;
  calls: ToolCallEvent[];
  /** Tool replies by event id, as they complete. */
  replies: Map<string, ChatMessage>;
  /** Tool executions still running (early dispatch), to await or abandon. */
  pending: Promise<unknown>[];
  finish_reason: string | null;
}

export function newRoundState(round_index: number): RoundState {
  return {
    round_index,
    text: "",
    reasoning: "",
    refusal: "",
    calls: [],
    replies: new Map(),
    pending: [],
    finish_reason: null,
  };
}

/** One tool invocation mode. The turn loop calls `runRound` and never asks which mode it has. */
export interface ModeStrategy {
  readonly mode: ToolInvocationMode;
  /** The chat agent's system message, as sent every round of the turn (recorded at turn_start). */
  systemPrompt(context: Pick<TurnContext, "config" | "tools">): string;
  /** Streams one chat-agent call and runs the tools it asks for, filling `state`. */
  runRound(context: TurnContext, history: readonly ChatMessage[], state: RoundState): Promise<void>;
}
