import type { ExperimentReport } from "../domain/experiment.js";

/** The report as one pretty JSON document (snake_case, as stored), ending with a newline. */
export function renderJsonReport(report: ExperimentReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
