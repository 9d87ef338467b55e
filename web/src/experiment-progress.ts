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
  | { type: "done"; outcome: string }
  | { type: "cancelled" }
  | { type: "error"; message: string };

export type LivePhase = "connecting" | "running" | "done" | "cancelled" | "error" | "idle";

export interface LiveState {
  phase: LivePhase;
  /** The latest counts; null until the first progress (or idle) event. */
  progress: ExperimentProgress | null;
  /** `done`'s outcome, or `error`'s message. */
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
    case "done":
      return { type: "done", outcome: typeof body.outcome === "string" ? body.outcome : "done" };
    case "cancelled":
      return { type: "cancelled" };
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
      return { ...state, phase: "done", detail: event.outcome };
    case "cancelled":
      return { ...state, phase: "cancelled", detail: null };
    case "error":
      return { ...state, phase: "error", detail: event.message };
  }
}

/** Runs accounted for: finished now, or finished before and skipped. */
export const runsDone = (progress: ExperimentProgress): number =>
  Math.min(progress.total, progress.finished + progress.skipped);

/**
 * The bar's parts as percentages of the total: runs that passed (or were already done), runs that
 * failed, runs under way. They never add up past 100.
 */
export function progressShares(progress: ExperimentProgress): {
  passed: number;
  failed: number;
  running: number;
} {
  if (progress.total <= 0) return { passed: 0, failed: 0, running: 0 };
  const share = (n: number) => (100 * n) / progress.total;
  const failed = Math.min(progress.failed, progress.finished);
  const done = runsDone(progress);
  const running = Math.min(progress.running, progress.total - done);
  return { passed: share(done - failed), failed: share(failed), running: share(running) };
}

/** "12 of 40 runs · 2 failed · 3 running · 4 already done". */
export function progressSummary(progress: ExperimentProgress): string {
  const parts = [`${runsDone(progress)} of ${progress.total} runs`];
  if (progress.failed > 0) parts.push(`${progress.failed} failed`);
  if (progress.running > 0) parts.push(`${progress.running} running`);
  if (progress.skipped > 0) parts.push(`${progress.skipped} already done`);
  return parts.join(" · ");
}

/** Whether the report may have changed: more runs ended. */
export const progressAdvanced = (
  before: ExperimentProgress | null,
  after: ExperimentProgress | null,
): boolean => after !== null && (before === null || runsDone(after) !== runsDone(before));
