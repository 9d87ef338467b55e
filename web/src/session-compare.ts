/**
 * The compare table of two sessions, told truthfully: outcome rows first (did the turns complete,
 * did the tools work, did the repairs), rows that cannot apply to a session's mode marked as such
 * and never coloured, and a difference coloured only when it is larger than the noise.
 */
import type { ToolInvocationMode, TurnRecord, UsageSummary } from "./api-types.js";
import { formatInt, formatMs } from "./format.js";
import {
  compareMetrics,
  type Direction,
  delta,
  type MetricDelta,
  type SessionMetrics,
  turnTimings,
} from "./metrics.js";
import type { TranscriptTurn } from "./transcript.js";
import { turnOutcome } from "./turn-outcome.js";

/** A share (cached of prompt) moving less than this is rounding and cache luck, not a finding. */
export const RATIO_FLOOR = 0.01;

/** Timings both under this are too small to tell apart (timer, scheduling, a GC pause). */
export const TIMING_FLOOR_MS = 5;

/**
 * Why a better/worse difference is noise whatever the samples say, or null: timings both under
 * TIMING_FLOOR_MS, a share moving less than RATIO_FLOOR. Sessions and configurations alike.
 */
export function belowFloor(row: {
  unit: string;
  a: number | null;
  b: number | null;
  delta: number | null;
}): string | null {
  const { a, b } = row;
  if (row.unit === "ms" && a !== null && b !== null) {
    if (Math.abs(a) < TIMING_FLOOR_MS && Math.abs(b) < TIMING_FLOOR_MS) {
      return `both under ${TIMING_FLOOR_MS} ms`;
    }
  }
  if (row.unit === "ratio" && row.delta !== null && Math.abs(row.delta) < RATIO_FLOOR) {
    return `under ${RATIO_FLOOR * 100} percentage point`;
  }
  return null;
}

export interface CompareInput {
  mode: ToolInvocationMode | string;
  metrics: SessionMetrics;
  usage: UsageSummary;
  turns: readonly TurnRecord[];
  transcript: readonly TranscriptTurn[];
}

export interface CompareRow extends MetricDelta {
  /** Why a row is not coloured (noise, a mode it does not apply to), or null. */
  note: string | null;
}

export interface SessionOutcomes {
  turns_completed: number;
  turns_not_completed: number;
  turns_all_tools_failed: number;
  tool_errors: number;
  fallbacks_ok: number;
  fallbacks_failed: number;
}

export function sessionOutcomes(transcript: readonly TranscriptTurn[]): SessionOutcomes {
  const outcomes: SessionOutcomes = {
    turns_completed: 0,
    turns_not_completed: 0,
    turns_all_tools_failed: 0,
    tool_errors: 0,
    fallbacks_ok: 0,
    fallbacks_failed: 0,
  };
  for (const turn of transcript) {
    if (turn.status === "running") continue;
    const outcome = turnOutcome(turn);
    if (turn.status === "completed") outcomes.turns_completed += 1;
    else outcomes.turns_not_completed += 1;
    if (outcome.all_tools_failed) outcomes.turns_all_tools_failed += 1;
    outcomes.tool_errors += outcome.tool_errors;
    outcomes.fallbacks_ok += outcome.fallbacks_ok;
    outcomes.fallbacks_failed += outcome.fallbacks_failed;
  }
  return outcomes;
}

function variance(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1);
}

/**
 * How far apart two figures built from per-turn samples may be by chance: twice the standard
 * error of their difference. `sum` figures add the samples, `mean` figures average them. Paired
 * samples (the same user messages, as after a replay) are compared turn by turn, which removes
 * the differences between the questions themselves. Null when either side has fewer than two.
 */
export function differenceSpread(
  a: readonly number[],
  b: readonly number[],
  kind: "sum" | "mean",
  paired: boolean,
): number | null {
  if (paired && a.length === b.length) {
    const differences = a.map((value, index) => (b[index] ?? 0) - value);
    const spread = variance(differences);
    if (spread === null) return null;
    const n = differences.length;
    return 2 * Math.sqrt(kind === "sum" ? n * spread : spread / n);
  }
  const varianceA = variance(a);
  const varianceB = variance(b);
  if (varianceA === null || varianceB === null) return null;
  const scale = (n: number) => (kind === "sum" ? n : 1 / n);
  return 2 * Math.sqrt(varianceA * scale(a.length) + varianceB * scale(b.length));
}

/**
 * A better/worse verdict stands only when the difference is larger than the noise: timings both
 * under TIMING_FLOOR_MS, timings without a spread (under two samples a side), or a difference
 * within `spread`, are "noise", said so in the note.
 */
export function judged(
  row: Omit<MetricDelta, "delta" | "percent" | "verdict">,
  spread: number | null,
): CompareRow {
  const base = delta(row.a, row.b, row.direction);
  const full = { ...row, ...base, note: null };
  if (base.verdict !== "better" && base.verdict !== "worse") return full;
  const floor = belowFloor({ ...row, delta: base.delta });
  if (floor !== null) return { ...full, verdict: "noise", note: floor };
  // A timing from one sample a side says nothing about which is faster: the machine's noise
  // alone moves it by more than most real differences.
  if (row.unit === "ms" && spread === null) {
    return { ...full, verdict: "noise", note: "too few samples to tell from noise" };
  }
  if (spread !== null && base.delta !== null && Math.abs(base.delta) <= spread) {
    const shown = row.unit === "ms" ? formatMs(spread) : formatInt(spread);
    return { ...full, verdict: "noise", note: `within the spread (±${shown})` };
  }
  return full;
}

/** Rows that only a dual_agent session can have: the event agent repairs arguments. */
const EVENT_AGENT_ROWS = new Set(["fallbacks", "fallbacks_ok", "fallbacks_failed"]);

function notApplicable(row: CompareRow, a: CompareInput, b: CompareInput): CompareRow {
  const aApplies = a.mode === "dual_agent";
  const bApplies = b.mode === "dual_agent";
  if (!EVENT_AGENT_ROWS.has(row.key) || (aApplies && bApplies)) return row;
  const mode = !aApplies ? a.mode : b.mode;
  return {
    ...row,
    a: aApplies ? row.a : null,
    b: bApplies ? row.b : null,
    delta: null,
    percent: null,
    verdict: "not_applicable",
    note: `${mode} has no event agent, so no argument repairs`,
  };
}

/**
 * A session without a turn did nothing: its zero tokens, calls and time are not an improvement
 * on the other's, so no metric of the pair is coloured (the outcome rows still say the turns).
 */
function withoutTurns(row: CompareRow, a: CompareInput, b: CompareInput): CompareRow {
  if (row.verdict !== "better" && row.verdict !== "worse") return row;
  const empty = a.turns.length === 0 ? "A" : b.turns.length === 0 ? "B" : null;
  if (empty === null) return row;
  return { ...row, verdict: "unknown", note: `session ${empty} has no turns: nothing to compare` };
}

function userMessages(input: CompareInput): string[] {
  return input.turns.map((turn) => turn.user_message);
}

/** Per-turn (and per-call) samples of each compared figure, for its spread. */
function samples(input: CompareInput): Record<string, { values: number[]; kind: "sum" | "mean" }> {
  const timings = turnTimings(input.usage, input.turns);
  const known = (values: (number | null)[]) =>
    values.filter((value): value is number => value !== null);
  return {
    total_tokens: { values: input.usage.turns.map((turn) => turn.total_tokens), kind: "sum" },
    elapsed_ms: { values: input.usage.calls.map((call) => call.elapsed_ms), kind: "sum" },
    wall_time_ms: { values: known(timings.map((t) => t.wall_time_ms)), kind: "sum" },
    mean_ttft_ms: { values: known(timings.map((t) => t.ttft_ms)), kind: "mean" },
    cost_usd: { values: known(input.usage.turns.map((turn) => turn.cost_usd)), kind: "sum" },
  };
}

const OUTCOME_ROWS: {
  key: keyof SessionOutcomes;
  label: string;
  direction: Direction;
}[] = [
  { key: "turns_completed", label: "Turns completed", direction: "higher" },
  { key: "turns_not_completed", label: "Turns failed, cancelled or cut off", direction: "lower" },
  {
    key: "turns_all_tools_failed",
    label: "Turns whose every tool call failed",
    direction: "lower",
  },
  { key: "tool_errors", label: "Tool errors", direction: "lower" },
  { key: "fallbacks_ok", label: "Argument repairs succeeded", direction: "neutral" },
  { key: "fallbacks_failed", label: "Argument repairs failed", direction: "lower" },
];

/** Outcome rows, then the metrics; each judged against its noise and its modes. */
export function compareSessions(a: CompareInput, b: CompareInput): CompareRow[] {
  const outcomesA = sessionOutcomes(a.transcript);
  const outcomesB = sessionOutcomes(b.transcript);
  const outcomeRows = OUTCOME_ROWS.map(({ key, label, direction }) =>
    judged({ key, label, unit: "count", direction, a: outcomesA[key], b: outcomesB[key] }, null),
  );
  const samplesA = samples(a);
  const samplesB = samples(b);
  const messagesA = userMessages(a);
  const messagesB = userMessages(b);
  const paired =
    messagesA.length === messagesB.length &&
    messagesA.every((message, index) => message === messagesB[index]);
  const metricRows = compareMetrics(a.metrics, b.metrics).map((row) => {
    const left = samplesA[row.key];
    const right = samplesB[row.key];
    // Per-call samples pair only when the calls line up one to one.
    const pairable = paired && row.key !== "elapsed_ms";
    const spread =
      left && right ? differenceSpread(left.values, right.values, left.kind, pairable) : null;
    return withoutTurns(judged(row, spread), a, b);
  });
  return [...outcomeRows, ...metricRows].map((row) => notApplicable(row, a, b));
}
