/** A running turn, folded from its stream of TurnEvents into the transcript's shape. */
import type {
  AgentRole,
  CallKind,
  ToolInvocationMode,
  TurnEvent,
  TurnUsageRollup,
} from "./api-types.js";
import type { ToolCardData, TranscriptRound, TranscriptTurn } from "./transcript.js";

export interface LiveUsage {
  round_index: number;
  agent: AgentRole;
  call_kind: CallKind;
  total_tokens: number;
  estimated: boolean;
  cost_usd: number | null;
  cost_source: "reported" | "estimated" | null;
  ttft_ms: number | null;
  elapsed_ms: number;
}

export interface LiveTurn {
  turn: TranscriptTurn;
  mode: ToolInvocationMode | null;
  simulated: boolean | null;
  current_round: number;
  usage_events: LiveUsage[];
  usage: TurnUsageRollup | null;
  /** Set once `turn_end` arrived (or the stream stopped). */
  finished: boolean;
}

export function startLiveTurn(userMessage: string): LiveTurn {
  return {
    turn: {
      turn_index: null,
      user_message: userMessage,
      rounds: [],
      status: "running",
      wall_time_ms: null,
      error: null,
      notices: [],
    },
    mode: null,
    simulated: null,
    current_round: 0,
    usage_events: [],
    usage: null,
    finished: false,
  };
}

function withRound(
  live: LiveTurn,
  round_index: number,
  update: (round: TranscriptRound) => TranscriptRound,
): LiveTurn {
  const rounds = live.turn.rounds;
  const exists = rounds.some((round) => round.round_index === round_index);
  const base = exists
    ? rounds
    : [
        ...rounds,
        { round_index, text: "", reasoning: "", refusal: "", tools: [], finish_reason: null },
      ];
  return {
    ...live,
    turn: {
      ...live.turn,
      rounds: base.map((round) => (round.round_index === round_index ? update(round) : round)),
    },
  };
}

function withTool(
  live: LiveTurn,
  round_index: number,
  event_id: string,
  update: (card: ToolCardData) => ToolCardData,
): LiveTurn {
  return withRound(live, round_index, (round) => ({
    ...round,
    tools: round.tools.map((card) => (card.id === event_id ? update(card) : card)),
  }));
}

/** The next state after one event. Pure: the chat view re-renders from what it returns. */
export function applyTurnEvent(live: LiveTurn, event: TurnEvent): LiveTurn {
  switch (event.type) {
    case "turn_start":
      return {
        ...live,
        mode: event.mode,
        simulated: event.simulated,
        turn: { ...live.turn, turn_index: event.turn_index },
      };
    case "round_start":
      return {
        ...withRound(live, event.round_index, (round) => round),
        current_round: event.round_index,
      };
    case "text_delta":
      return withRound(live, event.round_index, (round) => ({
        ...round,
        text: round.text + event.text,
      }));
    case "reasoning_delta":
      return withRound(live, event.round_index, (round) => ({
        ...round,
        reasoning: round.reasoning + event.text,
      }));
    case "refusal_delta":
      return withRound(live, event.round_index, (round) => ({
        ...round,
        refusal: round.refusal + event.text,
      }));
    case "retry": {
      const status = event.status === null ? "" : ` HTTP ${event.status}`;
      const notice = `Retrying ${event.agent.replace("_", " ")} (attempt ${event.attempt})${status}: ${event.reason}`;
      return { ...live, turn: { ...live.turn, notices: [...live.turn.notices, notice] } };
    }
    case "tool_call":
      return withRound(live, event.round_index, (round) => ({
        ...round,
        tools: [
          ...round.tools.filter((card) => card.id !== event.event.id),
          {
            id: event.event.id,
            name: event.event.name,
            arguments: event.event.arguments,
            raw_arguments: event.event.raw_arguments,
            requested_raw_arguments: null,
            state: "running",
            result: null,
            latency_ms: null,
            used_fallback: false,
            fallback: null,
          },
        ],
      }));
    case "fallback_start":
      return withTool(live, event.round_index, event.event_id, (card) => ({
        ...card,
        state: "repairing",
        used_fallback: true,
        fallback: { state: "running", reason: event.reason, error: null },
      }));
    case "fallback_end":
      return withTool(live, event.round_index, event.event_id, (card) => ({
        ...card,
        state: "running",
        ...(event.event
          ? {
              arguments: event.event.arguments,
              raw_arguments: event.event.raw_arguments,
              requested_raw_arguments: card.raw_arguments,
            }
          : {}),
        fallback: {
          state: event.ok ? "ok" : "failed",
          reason: card.fallback?.reason ?? null,
          error: event.error,
        },
      }));
    case "approval_required":
      return withTool(live, event.round_index, event.event_id, (card) => ({
        ...card,
        state: "approval",
        arguments: event.arguments,
        approval: {
          state: "pending",
          decided_by: null,
          reason: null,
          wait_ms: null,
        },
      }));
    case "approval_decided":
      return withTool(live, event.round_index, event.event_id, (card) => ({
        ...card,
        state: "running",
        ...(event.arguments
          ? { arguments: event.arguments, raw_arguments: JSON.stringify(event.arguments) }
          : {}),
        approval: {
          state: event.decision === "approve" ? "approved" : "denied",
          decided_by: event.decided_by,
          reason: event.reason,
          wait_ms: event.wait_ms,
        },
      }));
    case "tool_result":
      return withTool(live, event.round_index, event.event_id, (card) => ({
        ...card,
        state: event.ok ? "ok" : "error",
        result: event.content,
        latency_ms: event.latency_ms,
        used_fallback: card.used_fallback || event.used_fallback,
      }));
    case "usage":
      return {
        ...live,
        usage_events: [
          ...live.usage_events,
          {
            round_index: event.round_index,
            agent: event.agent,
            call_kind: event.call_kind,
            total_tokens: event.usage.total_tokens,
            estimated: event.estimated,
            cost_usd: event.cost_usd ?? null,
            cost_source: event.cost_source ?? null,
            ttft_ms: event.ttft_ms,
            elapsed_ms: event.elapsed_ms,
          },
        ],
      };
    case "round_end":
      return withRound(live, event.round_index, (round) => ({
        ...round,
        finish_reason: event.finish_reason,
      }));
    case "error":
      return {
        ...live,
        turn: { ...live.turn, error: { code: event.code, message: event.message } },
      };
    case "turn_end":
      return {
        ...live,
        finished: true,
        usage: event.usage,
        turn: {
          ...live.turn,
          turn_index: event.turn_index,
          status: event.status,
          wall_time_ms: event.wall_time_ms,
        },
      };
    default: {
      // Every event of the union is handled above: a new one fails the type check here.
      const unhandled: never = event;
      void unhandled;
      // A newer server's event this page does not know changes nothing it draws.
      return live;
    }
  }
}

export type LivePhase =
  | "starting"
  | "waiting"
  | "thinking"
  | "streaming"
  | "repairing"
  | "approval"
  | "tools"
  | "finished";

/** What the running turn is doing now, for the progress line. */
export function livePhase(live: LiveTurn): LivePhase {
  if (live.finished) return "finished";
  const round = live.turn.rounds.find((item) => item.round_index === live.current_round);
  if (!round) return "starting";
  if (round.tools.some((card) => card.state === "repairing")) return "repairing";
  if (round.tools.some((card) => card.state === "approval")) return "approval";
  if (round.tools.some((card) => card.state === "running")) return "tools";
  if (round.text === "" && round.refusal === "" && round.tools.length === 0) {
    return round.reasoning === "" ? "waiting" : "thinking";
  }
  return "streaming";
}

/** The first chat completion's time to first token in this turn, once known. */
export function liveTtft(live: LiveTurn): number | null {
  const first = live.usage_events
    .filter((usage) => usage.call_kind === "chat_completion")
    .sort((left, right) => left.round_index - right.round_index)[0];
  return first?.ttft_ms ?? null;
}
