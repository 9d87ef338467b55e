import type { ScenarioCategory } from "./experiment.js";

/**
 * The shapes of a running experiment's progress and of one scenario side by side, as the server
 * sends them and the web UI reads them (both import them from here).
 */

/** How far a running experiment is, as its `progress` events carry it. */
export interface ExperimentRunProgress {
  /** Planned runs: cells × scenarios × repetitions. */
  total: number;
  /** Runs already complete in the store when it started (not run again). */
  skipped: number;
  /** Planned runs finished, skipped ones included. */
  finished: number;
  /** Finished runs with a failed turn (a provider or runtime failure), or that could not run. */
  failed: number;
  /** Runs in flight now. */
  running: number;
  /** The run that finished last (null before any did); `success` is its score's verdict. */
  last: { run_key: string; success: boolean } | null;
}

/** A finished run of one scenario in one cell, as the side-by-side view shows it. */
export interface ScenarioRun {
  session_id: string;
  repetition: number;
  success: boolean;
  /** Why it failed: one line per failed check, naming the call and the matcher. */
  failures: string[];
  /** The last turn's final answer. */
  answer: string;
  /** Every turn's tool calls, in order; `turn` counts from 1; `ok` null when not executed. */
  tool_calls: {
    turn: number;
    name: string;
    arguments: Record<string, unknown>;
    ok: boolean | null;
  }[];
}

export interface ScenarioCell {
  cell: string;
  label: string;
  /** Finished runs of the scenario in this cell (`runs` holds at most the first 50). */
  runs_total: number;
  /** Of those, the runs that passed (all of them, not only the ones in `runs`). */
  successes_total: number;
  /** Runs of the scenario in this cell not finished yet (running, cancelled, interrupted). */
  incomplete: number;
  runs: ScenarioRun[];
}

/** `GET /api/experiments/:id/scenarios`: every scenario the experiment has a run of. */
export interface ScenarioList {
  experiment_id: string;
  /** By category, then id. */
  scenarios: { scenario: string; category: ScenarioCategory }[];
}

/** `GET /api/experiments/:id/scenarios/:scenario`. */
export interface ScenarioComparison {
  experiment_id: string;
  scenario: string;
  category: ScenarioCategory;
  cells: ScenarioCell[];
}
