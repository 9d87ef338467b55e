import { existsSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../../domain/errors.js";
import { parseInput } from "../../domain/validation.js";
import { SUPPORTED_CATEGORIES } from "../../experiments/bfcl/bfcl-categories.js";
import { bfclSuiteText } from "../../experiments/bfcl/bfcl-suite-text.js";
import { importBfcl, type SkippedCase } from "../../experiments/bfcl/import-bfcl.js";
import type { CommandContext } from "../command-context.js";
import { fileErrorReason } from "../files.js";
import { type CliIo, plural, terminalSafe } from "../output.js";

const ImportFlags = z.object({
  out: z.string().min(1, "name the suite file to write"),
  categories: z
    .string()
    .transform((text) =>
      text
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== ""),
    )
    .optional(),
  limit: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .optional(),
  answers: z.string().min(1).optional(),
  name: z.string().trim().min(1, "name the suite").optional(),
  force: z.boolean().optional(),
});

const EXAMPLES = `
Examples:
  $ agent-lab suite import bfcl gorilla/berkeley-function-call-leaderboard/bfcl_eval/data --out bfcl.yaml
  $ agent-lab bench bfcl.yaml --repetitions 1`;

export function registerSuiteCommand(program: Command, context: CommandContext): void {
  const suite = program
    .command("suite")
    .description("Work with suite files: import benchmark cases as scenarios.")
    .addHelpText("after", EXAMPLES);
  const importCommand = suite
    .command("import")
    .description("Turn another benchmark's files into a suite for agent-lab bench.")
    .addHelpText("after", EXAMPLES);
  importCommand
    .command("bfcl")
    .description(
      "Import BFCL (Berkeley Function Calling Leaderboard) cases: one scenario a case, its functions as declared tools, scored by BFCL's rules on the first response.",
    )
    .argument(
      "<paths...>",
      "BFCL data files (BFCL_v4_CATEGORY.json, one case a line) or folders holding them",
    )
    .requiredOption("--out <file>", "the suite file (YAML) to write")
    .option(
      "--categories <list>",
      "only these BFCL categories, comma-separated (default: every importable one met)",
    )
    .option("--limit <n>", "at most N cases of each category (the first ones, in file order)")
    .option(
      "--answers <dir>",
      "the folder of possible answers (default: possible_answer/ beside each data file)",
    )
    .option("--name <name>", "the suite's name (default: bfcl)")
    .option("--force", "overwrite the suite file when it exists")
    .addHelpText(
      "after",
      `
Importable categories: ${Object.keys(SUPPORTED_CATEGORIES).join(", ")}.
multi_turn, memory, web_search and format_sensitivity need BFCL's stateful backends: their cases
are listed as skipped, with the reason, as is any case a scenario cannot hold (a question that
replays an assistant message, two functions with one name once dots become underscores).

Examples:
  $ agent-lab suite import bfcl gorilla/berkeley-function-call-leaderboard/bfcl_eval/data --out bfcl.yaml
  $ agent-lab suite import bfcl data/BFCL_v4_simple_python.json data/BFCL_v4_irrelevance.json --limit 20 --out small.yaml
  $ agent-lab bench bfcl.yaml --repetitions 1`,
    )
    .action((paths: string[], rawFlags: unknown) => {
      const flags = parseInput(ImportFlags, rawFlags, "suite import bfcl");
      const { io } = context;
      // Refused before the reading, which can take a while; "wx" below catches a late one.
      if (!flags.force && existsSync(flags.out)) throw alreadyExists(flags.out);
      const result = importBfcl(paths, {
        ...(flags.categories !== undefined ? { categories: flags.categories } : {}),
        ...(flags.limit !== undefined ? { limit: flags.limit } : {}),
        ...(flags.answers !== undefined ? { answersDir: flags.answers } : {}),
        ...(flags.name !== undefined ? { name: flags.name } : {}),
        onProgress: ({ file, lines, imported }) =>
          io.stderr.write(
            `${terminalSafe(file)}: ${plural(lines, "line")} read, ${imported} imported so far\n`,
          ),
      });
      const { summary } = result;
      writeSkipped(io, summary.skipped);
      if (result.suite === null) {
        throw new InvalidInputError(
          `nothing to import from ${plural(summary.files.length, "file")}: ${plural(summary.skipped.length, "case")} skipped, ${summary.not_selected} not among --categories; no suite written`,
        );
      }
      const text = bfclSuiteText(result.suite, summary);
      try {
        writeFileSync(flags.out, text, { flag: flags.force ? "w" : "wx" });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") throw alreadyExists(flags.out);
        throw new InvalidInputError(`cannot write ${flags.out}: ${fileErrorReason(error)}`);
      }
      const counts = Object.entries(summary.imported)
        .map(([category, count]) => `${category} ${count}`)
        .join(", ");
      const wholeFiles = summary.skipped.filter((entry) => entry.line === null).length;
      const cases = summary.skipped.length - wholeFiles;
      const skipped = [
        ...(cases > 0 ? [plural(cases, "case")] : []),
        ...(wholeFiles > 0 ? [plural(wholeFiles, "whole file")] : []),
      ];
      const leftOut = [
        ...(skipped.length > 0 ? [`${skipped.join(" and ")} skipped (listed above)`] : []),
        ...(summary.over_limit > 0 ? [`${summary.over_limit} over --limit`] : []),
        ...(summary.not_selected > 0 ? [`${summary.not_selected} not among --categories`] : []),
      ];
      io.stdout.write(
        `Wrote ${terminalSafe(flags.out)}: ${plural(summary.total, "scenario")} (${counts})${leftOut.length > 0 ? `; ${leftOut.join(", ")}` : ""}\nRun it: agent-lab bench ${terminalSafe(flags.out)}\n`,
      );
    });
}

function alreadyExists(path: string): InvalidInputError {
  return new InvalidInputError(`${path} already exists; pass --force to overwrite it`);
}

/**
 * One line per skipped case; a run of cases skipped for one reason in one file (a whole
 * multi_turn file) is one line with its count and first and last ids.
 */
function writeSkipped(io: CliIo, skipped: readonly SkippedCase[]): void {
  let index = 0;
  while (index < skipped.length) {
    const first = skipped[index] as SkippedCase;
    let end = index + 1;
    while (
      end < skipped.length &&
      skipped[end]?.file === first.file &&
      skipped[end]?.reason === first.reason
    ) {
      end++;
    }
    const last = skipped[end - 1] as SkippedCase;
    const count = end - index;
    const lines =
      first.line === null
        ? [`${first.file}: skipped the whole file: ${first.reason}`]
        : count <= 3
          ? skipped
              .slice(index, end)
              .map((entry) => `${entry.file}:${entry.line}: skipped ${entry.id}: ${entry.reason}`)
          : [
              `${first.file}:${first.line}-${last.line}: skipped ${count} cases (${first.id} … ${last.id}): ${first.reason}`,
            ];
    for (const line of lines) io.stderr.write(`${terminalSafe(line)}\n`);
    index = end;
  }
}
