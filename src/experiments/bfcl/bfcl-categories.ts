import type { ScenarioCategory } from "../../domain/experiment.js";

/**
 * BFCL's test categories (bfcl_eval/constants/category_mapping.py), which of them a suite can hold,
 * and why the others cannot. A case's category comes from its id, as BFCL reads it
 * (`extract_test_category_from_id`: `live_simple_19-3-15` → `live_simple`).
 */

/** The single-turn categories, each with the lab category its scenarios get. */
export const SUPPORTED_CATEGORIES: Readonly<Record<string, ScenarioCategory>> = {
  simple_python: "simple",
  simple_java: "simple",
  simple_javascript: "simple",
  multiple: "multiple",
  parallel: "parallel",
  parallel_multiple: "parallel_multiple",
  irrelevance: "irrelevance",
  live_simple: "simple",
  live_multiple: "multiple",
  live_parallel: "parallel",
  live_parallel_multiple: "parallel_multiple",
  live_irrelevance: "irrelevance",
  live_relevance: "relevance",
};

/** Scored without a possible answer: BFCL checks only whether any call was made. */
const WITHOUT_ANSWER = new Set(["irrelevance", "live_irrelevance", "live_relevance"]);

export function needsPossibleAnswer(category: string): boolean {
  return !WITHOUT_ANSWER.has(category);
}

export function isSupportedCategory(category: string): boolean {
  return Object.hasOwn(SUPPORTED_CATEGORIES, category);
}

const STATEFUL = "it needs BFCL's stateful backends";

/**
 * Why a known BFCL category cannot be imported, or null if it can. BFCL's own predicates match by
 * substring (`is_multi_turn`, `is_memory`, …), so these do too.
 */
export function unsupportedReason(category: string): string | null {
  if (isSupportedCategory(category)) return null;
  if (category.includes("format_sensitivity")) {
    return "format_sensitivity re-runs other categories' cases under varied prompt formats; import those categories instead";
  }
  if (category.includes("multi_turn"))
    return `multi_turn: ${STATEFUL} (file system, trading, travel…)`;
  if (category.includes("memory"))
    return `memory: ${STATEFUL} (a memory store filled by earlier conversations)`;
  if (category.includes("web_search")) return `web_search: ${STATEFUL} (a live search engine)`;
  return `unknown BFCL category ${JSON.stringify(category)}; importable: ${Object.keys(SUPPORTED_CATEGORIES).join(", ")}`;
}

/** BFCL's `extract_test_category_from_id`: what precedes the last `_` (and any `:` suffix). */
export function categoryOfId(id: string): string {
  const head = id.split(":")[0] ?? id;
  const cut = head.lastIndexOf("_");
  return cut < 0 ? head : head.slice(0, cut);
}

/** BFCL's file names: `BFCL_v4_live_simple.json` → `live_simple` (null when not one of them). */
export function categoryOfFileName(fileName: string): string | null {
  const match = /^BFCL_v\d+_(\w+?)(?:_score|_result)?\.json$/.exec(fileName);
  return match?.[1] ?? null;
}

/** Which language's hints BFCL adds to the function docs (`is_java`, `is_js`). */
export type FunctionLanguage = "python" | "java" | "javascript";

export function languageOf(category: string): FunctionLanguage {
  if (category.includes("javascript")) return "javascript";
  if (category.includes("java")) return "java";
  return "python";
}
