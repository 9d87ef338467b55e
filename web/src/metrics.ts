/** Pure numbers behind the usage tab and the compare page: timings, waterfall layout, deltas. */
import type {
  CallKind,
  TurnRecord,
  TurnUsageRollup,
  UsageCallRecord,
  UsageRollup,
  UsageSummary,
} from "./api-types.js";

export interface TurnTiming {
  turn_index: number;
  /** TTFT of the turn's first chat completion (lowest round). */
  ttft_ms: number | null;
  wall_time_ms: number | null;
}

/**
 * TTFT and wall time per turn; wall time from the turn record, else the usage roll-up. One pass
 * over each list (a session of thousands of turns and calls stays linear).
 */
export function turnTimings(usage: UsageSummary, turns: readonly TurnRecord[] = []): TurnTiming[] {
  const records = new Map(turns.map((turn) => [turn.turn_index, turn]));
  const rollups = new Map(usage.turns.map((turn) => [turn.turn_index, turn]));
  const firsts = new Map<number, UsageCallRecord>();
  for (const call of usage.calls) {
    if (call.call_kind !== "chat_completion") continue;
    const first = firsts.get(call.turn_index);
    if (
      first === undefined ||
      call.round_index < first.round_index ||
      (call.round_index === first.round_index && callStart(call) < callStart(first))
    ) {
      firsts.set(call.turn_index, call);
    }
  }
  return [...new Set([...rollups.keys(), ...records.keys()])]
    .sort((left, right) => left - right)
    .map((turn_index) => ({
      turn_index,
      ttft_ms: firsts.get(turn_index)?.ttft_ms ?? null,
      wall_time_ms:
        records.get(turn_index)?.wall_time_ms ?? rollups.get(turn_index)?.turn_wall_time_ms ?? null,
    }));
}

/**
 * The last turn whose calls the page read, when it read only the first ones (`callsPartial`): the
 * calls come in recording order, so the turns after it have none read, and their TTFT is unknown
 * here rather than absent; this one's may be too (a call is stored when it ends, and a tool's can
 * end before its turn's first model call is stored). Null when every call was read.
 */
export function lastTurnWithCallsRead(
  calls: readonly Pick<UsageCallRecord, "turn_index">[],
  callsPartial: boolean,
): number | null {
  if (!callsPartial) return null;
  return calls.at(-1)?.turn_index ?? 0;
}

/** When a call started, in epoch ms: it is recorded when it ends, `elapsed_ms` after its start. */
export function callStart(call: Pick<UsageCallRecord, "created_at" | "elapsed_ms">): number {
  return Date.parse(call.created_at) - call.elapsed_ms;
}

export interface WaterfallRow {
  key: string;
  label: string;
  kind: CallKind;
  round_index: number;
  /** Offset from the turn's first call start. */
  start_ms: number;
  duration_ms: number;
  ttft_ms: number | null;
  used_fallback: boolean;
  tokens: number;
}

export interface WaterfallLayout {
  rows: WaterfallRow[];
  /** The time axis spans 0…total_ms. */
  total_ms: number;
}

const KIND_ORDER: Record<CallKind, number> = {
  chat_completion: 0,
  argument_fallback: 1,
  tool_execution: 2,
};

export const KIND_LABELS: Record<CallKind, string> = {
  chat_completion: "chat completion",
  argument_fallback: "argument fallback",
  tool_execution: "tool execution",
};

/**
 * One row per call of a turn on one shared time axis starting at the turn's earliest call.
 * Rows go by round, then start time, then kind, so each round reads top to bottom.
 */
export function waterfallLayout(calls: UsageCallRecord[], turn_index: number): WaterfallLayout {
  const turnCalls = calls.filter(
    (call) => call.turn_index === turn_index && Number.isFinite(Date.parse(call.created_at)),
  );
  if (turnCalls.length === 0) return { rows: [], total_ms: 0 };
  const origin = Math.min(...turnCalls.map(callStart));
  const rows = turnCalls
    .map((call): WaterfallRow => {
      const subject = call.event_name ? ` ${call.event_name}` : "";
      const label =
        call.call_kind === "chat_completion"
          ? `R${call.round_index} chat`
          : call.call_kind === "argument_fallback"
            ? `R${call.round_index} fallback${subject}`
            : `R${call.round_index} tool${subject}`;
      return {
        key: call.metric_key ?? `call-${call.id}`,
        label,
        kind: call.call_kind,
        round_index: call.round_index,
        start_ms: Math.max(0, callStart(call) - origin),
        duration_ms: Math.max(0, call.elapsed_ms),
        ttft_ms: call.ttft_ms,
        used_fallback: call.used_fallback,
        tokens: call.total_tokens,
      };
    })
    .sort(
      (left, right) =>
        left.round_index - right.round_index ||
        left.start_ms - right.start_ms ||
        KIND_ORDER[left.kind] - KIND_ORDER[right.kind],
    );
  const total_ms = Math.max(...rows.map((row) => row.start_ms + row.duration_ms));
  return { rows, total_ms };
}

/**
 * Round, readable axis ticks from 0 to at least `max`: steps of 1, 2 or 5 × 10^n, never below
 * `minStep` (1 for counts, so no axis shows half a token).
 */
export function niceTicks(max: number, count = 5, minStep = 0): number[] {
  if (!Number.isFinite(max) || max <= 0) return [0, Math.max(1, minStep)];
  const rough = max / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const residual = rough / magnitude;
  const step = Math.max(
    minStep,
    (residual > 5 ? 10 : residual > 2 ? 5 : residual > 1 ? 2 : 1) * magnitude,
  );
  const steps = Math.ceil(max / step - 1e-9);
  const ticks: number[] = [];
  for (let index = 0; index <= steps; index++) ticks.push(Math.round(index * step * 1e6) / 1e6);
  return ticks;
}

export type Direction = "lower" | "higher" | "neutral";
/**
 * "noise": a difference no larger than the noise (see session-compare.ts); "not_applicable": a
 * row that one side's mode cannot have. Neither is coloured.
 */
export type Verdict =
  | "better"
  | "worse"
  | "same"
  | "neutral"
  | "unknown"
  | "noise"
  | "not_applicable";

export interface MetricDelta {
  key: string;
  label: string;
  unit: "count" | "ms" | "ratio" | "usd";
  direction: Direction;
  a: number | null;
  b: number | null;
  /** B − A. */
  delta: number | null;
  /** (B − A) / A; null when A is 0 or missing. */
  percent: number | null;
  verdict: Verdict;
}

export function delta(
  a: number | null,
  b: number | null,
  direction: Direction,
): Pick<MetricDelta, "delta" | "percent" | "verdict"> {
  if (a === null || b === null || !Number.isFinite(a) || !Number.isFinite(b)) {
    return { delta: null, percent: null, verdict: "unknown" };
  }
  const difference = b - a;
  const percent = a === 0 ? null : difference / Math.abs(a);
  if (direction === "neutral") return { delta: difference, percent, verdict: "neutral" };
  // Float noise is no difference.
  if (Math.abs(difference) <= 1e-9 * Math.max(1, Math.abs(a)))
    return { delta: 0, percent: a === 0 ? null : 0, verdict: "same" };
  const improved = direction === "lower" ? difference < 0 : difference > 0;
  return { delta: difference, percent, verdict: improved ? "better" : "worse" };
}

export interface SessionMetrics {
  total_tokens: number;
  cached_share: number | null;
  calls: number;
  fallbacks: number;
  tools: number;
  elapsed_ms: number;
  wall_time_ms: number | null;
  mean_ttft_ms: number | null;
  /** Null when unknown, or when some model call has no price: a partial sum compares nothing. */
  cost_usd: number | null;
}

function sumWallTime(
  rollup: UsageRollup,
  turns: readonly TurnUsageRollup[],
  records: readonly TurnRecord[],
): number | null {
  if (rollup.turn_wall_time_ms !== null) return rollup.turn_wall_time_ms;
  const values =
    records.length > 0
      ? records.map((turn) => turn.wall_time_ms)
      : turns.map((turn) => turn.turn_wall_time_ms);
  const known = values.filter((value): value is number => value !== null);
  return known.length === 0 ? null : known.reduce((sum, value) => sum + value, 0);
}

/**
 * The label a token figure carries when some of its calls were counted by the lab rather than
 * reported by the endpoint (a call cut short, or an endpoint without usage); null when none were.
 */
export function estimatedLabel(
  rollup: Pick<UsageRollup, "estimated_count"> | null | undefined,
): { text: string; title: string } | null {
  const count = rollup?.estimated_count ?? 0;
  if (count === 0) return null;
  return {
    text: "estimated",
    title: `${count} ${count === 1 ? "call" : "calls"} without the endpoint's usage (cut short, or not reported), counted with the lab's tokenizer`,
  };
}

/** A session's headline numbers; mean TTFT averages each turn's first chat completion. */
export function sessionMetrics(
  usage: UsageSummary,
  turns: readonly TurnRecord[] = [],
): SessionMetrics {
  const { session } = usage;
  const ttfts = turnTimings(usage, turns)
    .map((timing) => timing.ttft_ms)
    .filter((value): value is number => value !== null);
  return {
    total_tokens: session.total_tokens,
    cached_share: session.prompt_tokens > 0 ? session.cached_tokens / session.prompt_tokens : null,
    calls: session.call_count,
    fallbacks: session.fallback_count,
    tools: session.tool_count,
    elapsed_ms: session.elapsed_ms,
    wall_time_ms: sumWallTime(session, usage.turns, turns),
    mean_ttft_ms:
      ttfts.length === 0 ? null : ttfts.reduce((sum, value) => sum + value, 0) / ttfts.length,
    cost_usd: session.unpriced_count > 0 ? null : session.cost_usd,
  };
}

const COMPARED: {
  key: keyof SessionMetrics;
  label: string;
  unit: MetricDelta["unit"];
  direction: Direction;
}[] = [
  { key: "total_tokens", label: "Total tokens", unit: "count", direction: "lower" },
  { key: "cached_share", label: "Cached share of prompt", unit: "ratio", direction: "higher" },
  { key: "calls", label: "Calls", unit: "count", direction: "lower" },
  { key: "fallbacks", label: "Argument fallbacks", unit: "count", direction: "lower" },
  { key: "tools", label: "Tool executions", unit: "count", direction: "neutral" },
  { key: "elapsed_ms", label: "Elapsed (sum of calls)", unit: "ms", direction: "lower" },
  { key: "wall_time_ms", label: "Wall time (sum of turns)", unit: "ms", direction: "lower" },
  { key: "mean_ttft_ms", label: "Mean TTFT (first call per turn)", unit: "ms", direction: "lower" },
  { key: "cost_usd", label: "Cost (USD)", unit: "usd", direction: "lower" },
];

/** The compare table: each metric for A and B with B − A, the relative change and a verdict. */
export function compareMetrics(a: SessionMetrics, b: SessionMetrics): MetricDelta[] {
  return COMPARED.map(({ key, label, unit, direction }) => {
    const left = a[key];
    const right = b[key];
    return { key, label, unit, direction, a: left, b: right, ...delta(left, right, direction) };
  });
}

/**
 * The model that answered a call, when it is not the one asked for (routers answer with another;
 * a provider prefix such as `openai:` in the lab's model string is not part of the name sent).
 */
export function servedModel(
  call: Pick<UsageCallRecord, "response_model">,
  requested: string | null,
): string | null {
  const served = call.response_model;
  if (served === null || served === "") return null;
  if (requested === null) return served;
  const colon = requested.indexOf(":");
  const sent = colon === -1 ? requested : requested.slice(colon + 1);
  return served === requested || served === sent ? null : served;
}
