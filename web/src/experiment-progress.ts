/**
 * A running experiment as its event stream (`GET /api/experiments/:id/events`) tells it: the
 * events read from SSE messages, the state they add up to, and the words and shares the progress
 * bar shows. Pure, tested without a browser.
 */
import type { ExperimentProgress } from "./api-types.js";
import type { SseMessage } from "./sse.js";

export type ExperimentEvent =
  | { type: "progress"; progress: ExperimentProgress }
  /** Nothing runs under this id in this server: the store's counts, then the stream closes. */
  | { type: "idle"; progress: ExperimentProgress }
  /** `errors`: runs that could not run at all (left for a later start to retry). */
  | { type: "done"; errors: number }
  | { type: "cancelled"; progress: ExperimentProgress | null }
  | { type: "error"; message: string };

export type LivePhase = "connecting" | "running" | "done" | "cancelled" | "error" | "idle";

export interface LiveState {
  phase: LivePhase;
  /** The latest counts; null until the first progress (or idle) event. */
  progress: ExperimentProgress | null;
  /** What went wrong: `error`'s message, or the runs `done` could not run. */
  detail: string | null;
}

export const CONNECTING: LiveState = { phase: "connecting", progress: null, detail: null };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;

/** The counts of a progress-like object; missing or bad numbers read as 0. */
export function progressOf(value: Record<string, unknown>): ExperimentProgress {
  const last = value.last;
  return {
    total: count(value.total),
    skipped: count(value.skipped),
    finished: count(value.finished),
    failed: count(value.failed),
    running: count(value.running),
    last:
      isRecord(last) && typeof last.run_key === "string"
        ? { run_key: last.run_key, success: last.success === true }
        : null,
  };
}

/** One SSE message as an experiment event; anything else (unknown name, bad JSON) is null. */
export function parseExperimentEvent(message: SseMessage): ExperimentEvent | null {
  let data: unknown = {};
  if (message.data.trim() !== "") {
    try {
      data = JSON.parse(message.data);
    } catch {
      return null;
    }
  }
  const body = isRecord(data) ? data : {};
  switch (message.event) {
    case "progress":
    case "idle":
      return { type: message.event, progress: progressOf(body) };
    case "done": {
      const outcome = isRecord(body.outcome) ? body.outcome : {};
      return { type: "done", errors: Array.isArray(outcome.errors) ? outcome.errors.length : 0 };
    }
    case "cancelled":
      // The counts when it stopped, when the server sends them.
      return { type: "cancelled", progress: "total" in body ? progressOf(body) : null };
    case "error":
      return {
        type: "error",
        message: typeof body.message === "string" ? body.message : "the experiment failed",
      };
    default:
      return null;
  }
}

/** The state after `event`; an ended experiment keeps its last counts. */
export function applyExperimentEvent(state: LiveState, event: ExperimentEvent): LiveState {
  switch (event.type) {
    case "progress":
      return { phase: "running", progress: event.progress, detail: null };
    case "idle":
      return { phase: "idle", progress: event.progress, detail: null };
    case "done":
      return {
        ...state,
        phase: "done",
        detail:
          event.errors === 0
            ? null
            : `${event.errors} ${event.errors === 1 ? "run" : "runs"} could not run; starting the suite again retries them`,
      };
    case "cancelled":
      return { phase: "cancelled", progress: event.progress ?? state.progress, detail: null };
    case "error":
      return { ...state, phase: "error", detail: event.message };
  }
}

/**
 * Runs accounted for. `finished` counts the runs skipped because an earlier start finished them,
 * and `failed` counts finished runs whose turn failed (a provider or runtime failure) or that
 * could not run: a run the scorer fails is finished, not failed.
 */
export const runsDone = (progress: Pick<ExperimentProgress, "total" | "finished">): number =>
  Math.min(progress.total, progress.finished);

/**
 * The bar's parts as percentages of the total: runs finished, runs that failed to run, runs
 * under way. They never add up past 100.
 */
export function progressShares(progress: ExperimentProgress): {
  finished: number;
  failed: number;
  running: number;
} {
  if (progress.total <= 0) return { finished: 0, failed: 0, running: 0 };
  const share = (n: number) => (100 * n) / progress.total;
  const done = runsDone(progress);
  const failed = Math.min(progress.failed, done);
  const running = Math.min(progress.running, progress.total - done);
  return { finished: share(done - failed), failed: share(failed), running: share(running) };
}

/** "12 of 40 runs · 2 failed to run · 3 running · 4 from an earlier start". */
export function progressSummary(progress: ExperimentProgress): string {
  const parts = [`${runsDone(progress)} of ${progress.total} runs`];
  if (progress.failed > 0) parts.push(`${progress.failed} failed to run`);
  if (progress.running > 0) parts.push(`${progress.running} running`);
  if (progress.skipped > 0) parts.push(`${progress.skipped} from an earlier start`);
  return parts.join(" · ");
}

/** Whether the report may have changed: more runs ended. */
export const progressAdvanced = (
  before: ExperimentProgress | null,
  after: ExperimentProgress | null,
): boolean => after !== null && (before === null || runsDone(after) !== runsDone(before));

/**
 * An experiment started from this tab that had ended before its events were read (`idle`): shown
 * as finished, with the store's finished runs against the plan it was started with.
 */
export function endedBeforeWatching(
  idle: ExperimentProgress,
  plan: { total: number; skipped: number },
): LiveState {
  return {
    phase: "done",
    progress: {
      total: plan.total,
      skipped: plan.skipped,
      finished: Math.min(plan.total, idle.finished),
      failed: 0,
      running: 0,
      last: null,
    },
    detail: null,
  };
}
