import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { z } from "zod";
import { InvalidInputError } from "../../domain/errors.js";
import type { BfclAnswer, Suite } from "../../domain/experiment.js";
import { describeIssues, parseInput } from "../../domain/validation.js";
import {
  BfclCase,
  CaseId,
  caseToScenario,
  PossibleAnswer,
  type ScenarioInput,
} from "./bfcl-case.js";
import {
  categoryOfFileName,
  categoryOfId,
  languageOf,
  needsPossibleAnswer,
  SUPPORTED_CATEGORIES,
  unsupportedReason,
} from "./bfcl-categories.js";
import { readJsonLines } from "./bfcl-lines.js";

/**
 * `agent-lab suite import bfcl`: BFCL's own data files (and the `possible_answer/` files beside
 * them) read into a suite, one scenario a case. Nothing is dropped silently: a case that cannot be
 * imported is in `skipped` with its reason; a missing possible answer for a category scored by one
 * is an error naming the case, as is a line that is not a BFCL case.
 */

export interface BfclImportOptions {
  /** BFCL category names (`simple_python`, `live_multiple`…); default: every one met. */
  categories?: readonly string[];
  /** At most this many cases of each BFCL category (the first ones, in file order). */
  limit?: number;
  /** Where the possible answers are; default `possible_answer/` beside each data file. */
  answersDir?: string;
  /** The suite's name; default `bfcl`. */
  name?: string;
  /** Called every `PROGRESS_EVERY` lines of a file, and at the end of a file that long. */
  onProgress?: (progress: { file: string; lines: number; imported: number }) => void;
}

export const PROGRESS_EVERY = 1000;

export interface SkippedCase {
  file: string;
  /** null: the whole file. */
  line: number | null;
  id: string | null;
  category: string | null;
  reason: string;
}

export interface BfclImportSummary {
  files: string[];
  /** Imported cases by BFCL category. */
  imported: Record<string, number>;
  total: number;
  skipped: SkippedCase[];
  /** Cases of categories left out by `categories`. */
  not_selected: number;
  /** Cases past `limit` in their category. */
  over_limit: number;
}

export type SuiteInput = z.input<typeof Suite>;

export interface BfclImport {
  /** Null when no case could be imported (a suite needs one scenario). */
  suite: SuiteInput | null;
  summary: BfclImportSummary;
}

/** The files a list of paths names: files as given, folders' `BFCL_v*_*.json` files sorted. */
export function bfclDataFiles(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    if (!existsSync(path)) throw new InvalidInputError(`${path}: no such file or folder`);
    if (!statSync(path).isDirectory()) {
      files.push(path);
      continue;
    }
    const found = readdirSync(path)
      .filter((name) => categoryOfFileName(name) !== null)
      .filter((name) => statSync(join(path, name)).isFile())
      .sort()
      .map((name) => join(path, name));
    if (found.length === 0) {
      throw new InvalidInputError(
        `${path}: no BFCL data files in this folder (named like BFCL_v4_simple_python.json)`,
      );
    }
    files.push(...found);
  }
  return [...new Set(files)];
}

export function importBfcl(paths: readonly string[], options: BfclImportOptions = {}): BfclImport {
  const selected = checkCategories(options.categories);
  const files = bfclDataFiles(paths);
  const summary: BfclImportSummary = {
    files,
    imported: {},
    total: 0,
    skipped: [],
    not_selected: 0,
    over_limit: 0,
  };
  const scenarios: ScenarioInput[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const fileCategory = categoryOfFileName(basename(file));
    if (fileCategory?.includes("format_sensitivity")) {
      // Not JSON Lines: a map from categories to the ids of the cases it re-runs.
      if (selected === null || selected.has(fileCategory)) {
        summary.skipped.push({
          file,
          line: null,
          id: null,
          category: fileCategory,
          reason: unsupportedReason(fileCategory) ?? "",
        });
      }
      continue;
    }
    const answers = new AnswerFile(file, options.answersDir);
    const lines = readJsonLines(file, "BFCL data file");
    let count = 0;
    for (const { line, value } of lines) {
      count++;
      if (count % PROGRESS_EVERY === 0) {
        options.onProgress?.({ file, lines: count, imported: summary.total });
      }
      const where = `${file}:${line}`;
      const id = parseInput(CaseId, value, `${where}: not a BFCL case`).id;
      const category = categoryOfId(id);
      if (selected !== null && !selected.has(category)) {
        summary.not_selected++;
        continue;
      }
      const skip = (reason: string) => summary.skipped.push({ file, line, id, category, reason });
      const unsupported = unsupportedReason(category);
      if (unsupported !== null) {
        skip(unsupported);
        continue;
      }
      if (options.limit !== undefined && (summary.imported[category] ?? 0) >= options.limit) {
        summary.over_limit++;
        continue;
      }
      const first = seen.get(id);
      if (first !== undefined) {
        skip(`duplicate id (first at ${first})`);
        continue;
      }
      const entry = parseInput(BfclCase, value, `${where}: not a BFCL case`);
      const answer = needsPossibleAnswer(category) ? answers.answerFor(id, where) : undefined;
      const outcome = caseToScenario(entry, category, languageOf(category), answer);
      if ("skipped" in outcome) {
        skip(outcome.skipped);
        continue;
      }
      seen.set(id, where);
      scenarios.push(outcome.scenario);
      summary.imported[category] = (summary.imported[category] ?? 0) + 1;
      summary.total++;
    }
    if (count >= PROGRESS_EVERY)
      options.onProgress?.({ file, lines: count, imported: summary.total });
  }
  if (scenarios.length === 0) return { suite: null, summary };
  return {
    suite: {
      name: options.name ?? "bfcl",
      description: `BFCL cases (${Object.entries(summary.imported)
        .map(([category, count]) => `${category} ${count}`)
        .join(", ")}), scored by BFCL's rules on the first response.`,
      // BFCL offers a case's functions and nothing else: no built-in tools.
      config: { tools: [] },
      scenarios,
    },
    summary,
  };
}

function checkCategories(categories: readonly string[] | undefined): Set<string> | null {
  if (categories === undefined) return null;
  for (const category of categories) {
    const reason = unsupportedReason(category);
    if (reason !== null) throw new InvalidInputError(`--categories: ${category}: ${reason}`);
  }
  if (categories.length === 0) {
    throw new InvalidInputError(
      `--categories: name at least one of ${Object.keys(SUPPORTED_CATEGORIES).join(", ")}`,
    );
  }
  return new Set(categories);
}

/** A data file's possible answers, read when the first case needs one. */
class AnswerFile {
  readonly path: string;
  #answers: Map<string, BfclAnswer> | null = null;

  constructor(dataFile: string, answersDir: string | undefined) {
    this.path = join(answersDir ?? join(dirname(dataFile), "possible_answer"), basename(dataFile));
  }

  answerFor(id: string, where: string): BfclAnswer {
    if (this.#answers === null) {
      if (!existsSync(this.path)) {
        throw new InvalidInputError(
          `${where}: case ${id} needs its possible answer, and ${this.path} does not exist (give the folder with --answers)`,
        );
      }
      this.#answers = new Map();
      for (const { line, value } of readJsonLines(this.path, "BFCL possible answer file")) {
        const result = PossibleAnswer.safeParse(value);
        if (!result.success) {
          throw new InvalidInputError(
            `${this.path}:${line}: not a BFCL possible answer: ${describeIssues(result.error)}`,
          );
        }
        this.#answers.set(result.data.id, result.data.ground_truth);
      }
    }
    const answer = this.#answers.get(id);
    if (answer === undefined) {
      throw new InvalidInputError(`${where}: case ${id} has no possible answer in ${this.path}`);
    }
    return answer;
  }
}
