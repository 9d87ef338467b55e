/**
 * The per-scenario view of an experiment: one scenario's runs laid out
 * as a matrix (a column per configuration, a row per repetition), as promptfoo lays out its
 * outputs. Pure, tested without a browser.
 */
import type { ScenarioRun, ScenarioRunsResponse } from "./api-types.js";
import { formatInt } from "./format.js";

export interface ScenarioRow {
  repetition: number;
  /** Per cell, in the response's cell order, that cell's runs of this repetition (often one). */
  cells: ScenarioRun[][];
}

/** A row per repetition any cell ran; a cell without that repetition has an empty slot. */
export function scenarioRows(response: ScenarioRunsResponse): ScenarioRow[] {
  const repetitions = new Set<number>();
  for (const cell of response.cells) for (const run of cell.runs) repetitions.add(run.repetition);
  return [...repetitions]
    .sort((a, b) => a - b)
    .map((repetition) => ({
      repetition,
      cells: response.cells.map((cell) => cell.runs.filter((run) => run.repetition === repetition)),
    }));
}

/** One column's header line: "2 of 3 passed · 1 unfinished · first 50 of 80 shown". */
export function cellTally(cell: ScenarioRunsResponse["cells"][number]): string {
  // Over every finished run of the scenario here, not only the repetitions shown.
  const parts = [`${formatInt(cell.successes_total)} of ${formatInt(cell.runs_total)} passed`];
  if (cell.incomplete > 0) parts.push(`${cell.incomplete} unfinished`);
  if (cell.runs_total > cell.runs.length) {
    parts.push(`first ${cell.runs.length} shown`);
  }
  return parts.join(" · ");
}

export type RunOutcome = "passed" | "failed";

export const runOutcome = (run: ScenarioRun): RunOutcome => (run.success ? "passed" : "failed");

/** A call's arguments as one short line of JSON (a string that is not JSON stays as written). */
export function argumentsText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
