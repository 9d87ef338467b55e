import { basename } from "node:path";
import { blockYaml } from "./block-yaml.js";
import type { BfclImportSummary, SuiteInput } from "./import-bfcl.js";

/**
 * The imported suite as YAML, with a header saying where it came from and what was left out, so
 * the file explains itself.
 */
export function bfclSuiteText(suite: SuiteInput, summary: BfclImportSummary): string {
  const counts = Object.entries(summary.imported)
    .map(([category, count]) => `${category} ${count}`)
    .join(", ");
  const header = [
    "# Imported from BFCL (Berkeley Function Calling Leaderboard) by `agent-lab suite import bfcl`.",
    `# Files: ${summary.files.map((file) => basename(file)).join(", ")}`,
    `# Cases: ${summary.total} (${counts})`,
    ...(summary.skipped.length > 0
      ? [`# Skipped: ${summary.skipped.length} (the command listed each with its reason)`]
      : []),
    ...(summary.over_limit > 0 ? [`# Left out by --limit: ${summary.over_limit}`] : []),
    ...(summary.not_selected > 0 ? [`# Left out by --categories: ${summary.not_selected}`] : []),
  ];
  const body = blockYaml(suite);
  return `${header.join("\n")}\n${body}`;
}
