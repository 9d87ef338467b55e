import { z } from "zod";
import { ArgumentMatcher } from "./argument-matcher.js";
import { Price } from "./prices.js";
import { ToolInvocationMode } from "./session-config.js";
import { DeclaredTool } from "./tool-sources.js";

export { Price } from "./prices.js";

/**
 * Experiments: a suite of scenarios run across a matrix of configurations, many times, each run a
 * real session. Everything needed to score a run travels in its session config (`experiment`), so
 * any face (CLI, HTTP, web) can score a stored session without the suite file.
 */

export { ArgumentMatcher } from "./argument-matcher.js";

/**
 * How strings are compared by `equals` (at any depth, in lists and objects too): as written, or
 * as BFCL's checker does (remove ` ,./-_*^`, lowercase, `'` read as `"`).
 */
export const StringMatch = z.enum(["exact", "bfcl"]);
export type StringMatch = z.infer<typeof StringMatch>;

export const ExpectedToolCall = z.strictObject({
  name: z.string().min(1),
  /** Only the arguments named here are checked, unless `exact_arguments`. */
  arguments: z.record(z.string(), ArgumentMatcher).default({}),
  /** An argument the expectation does not name fails the call. */
  exact_arguments: z.boolean().optional(),
  /** Default `exact`. */
  string_match: StringMatch.optional(),
});
export type ExpectedToolCall = z.output<typeof ExpectedToolCall>;

export const TurnExpectation = z.strictObject({
  /** The tools that should be called in this turn (order not checked). */
  tools: z.array(ExpectedToolCall).default([]),
  /** No tool should be called (irrelevance). */
  no_tools: z.boolean().default(false),
  /** At least one tool call, any tool, any arguments (BFCL's relevance). */
  any_tool: z.boolean().optional(),
  /** Substrings the final answer must contain (case-insensitive). */
  answer_contains: z.array(z.string()).default([]),
  /** The turn must finish within this many rounds. */
  max_rounds: z.number().int().positive().optional(),
});
export type TurnExpectation = z.output<typeof TurnExpectation>;

export const ScenarioCategory = z.enum([
  "simple",
  "multiple",
  "parallel",
  "irrelevance",
  "missing_parameter",
  "multi_turn",
  "parallel_multiple",
  "relevance",
]);
export type ScenarioCategory = z.infer<typeof ScenarioCategory>;

/**
 * BFCL's possible answer as is: one entry per expected call, `{function_name: {parameter: [acceptable
 * values]}}`; `""` among the values means the parameter may be omitted. Function names are BFCL's
 * (dots included); a call to the renamed tool (`a.b` -> `a_b`, see `bfclToolName`) answers them.
 */
export const BfclAnswer = z.array(z.record(z.string(), z.record(z.string(), z.array(z.unknown()))));
export type BfclAnswer = z.output<typeof BfclAnswer>;

/** BFCL sends `a.b` as `a_b` to OpenAI-style models, whose tool names cannot hold dots. */
export const bfclToolName = (name: string): string => name.replaceAll(".", "_");

/** Which model responses of a turn are scored: all its rounds, or only the first (as BFCL). */
export const Scoring = z.enum(["all_rounds", "first_response"]);
export type Scoring = z.infer<typeof Scoring>;

/** Where an imported scenario came from, for reports and for going back to the source. */
export const ScenarioOrigin = z.strictObject({
  benchmark: z.literal("bfcl"),
  id: z.string().min(1),
  category: z.string().min(1),
});

export const Scenario = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "an id is letters, digits, _ . -"),
  category: ScenarioCategory,
  description: z.string().optional(),
  /** The chat agent's system prompt in this scenario's runs, over the cell's. */
  system_prompt: z.string().min(1).optional(),
  /** Declared (mock) tools for this scenario's runs, beside the suite's; same name replaces. */
  tools: z.array(DeclaredTool).default([]),
  turns: z
    .array(z.strictObject({ user: z.string().min(1), expect: TurnExpectation.prefault({}) }))
    .min(1),
  /** Default `all_rounds`. */
  scoring: Scoring.optional(),
  /** Scores the first turn by BFCL's rules (with `scoring: first_response`, as BFCL does). */
  bfcl_answer: BfclAnswer.optional(),
  origin: ScenarioOrigin.optional(),
});
export type Scenario = z.output<typeof Scenario>;

/** One named configuration of the matrix; `config` is a partial session config. */
export const NamedConfig = z.strictObject({
  name: z.string().min(1),
  config: z.record(z.string(), z.unknown()),
});

export const Matrix = z.strictObject({
  modes: z.array(ToolInvocationMode).min(1).default(["chat_agent_tools", "dual_agent"]),
  chat_models: z.array(z.string().min(1)).min(1).default(["sim"]),
  /** Default: each cell's event agent follows its chat agent. */
  event_models: z.array(z.string().min(1)).min(1).optional(),
  /** Whole configurations instead of (or crossed with) the model lists. */
  configs: z.array(NamedConfig).min(1).optional(),
});
export type Matrix = z.output<typeof Matrix>;

export const Suite = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  /** Shared session config for every cell (models and mode come from the matrix). */
  config: z.record(z.string(), z.unknown()).default({}),
  matrix: Matrix.prefault({}),
  repetitions: z.number().int().min(1).max(1000).default(1),
  concurrency: z.number().int().min(1).max(64).default(4),
  /** Declared (mock) tools offered in every run, beside the config's `tools`. */
  tools: z.array(DeclaredTool).default([]),
  /** Extends the built-in price table, by model string. */
  prices: z.record(z.string(), Price).default({}),
  /**
   * Nobody is there to ask, so calls to tools that require approval (mock_ticket) are decided by
   * this policy: `all` approves, `none` denies; either is audited as decided_by `policy`.
   */
  approval: z.enum(["all", "none"]).default("all"),
  scenarios: z.array(Scenario).min(1),
});
export type Suite = z.output<typeof Suite>;

/** One cell of the matrix: a full session config, minus the experiment tag. */
export interface Cell {
  /** Stable, readable: `dual_agent · sim · sim` or the named config. */
  id: string;
  label: string;
  mode: ToolInvocationMode;
  chat_model: string;
  event_model: string;
  config: Record<string, unknown>;
  /** The cell's place in its suite's matrix, from 0 (`expandCells`). */
  order?: number;
}

/** What each run's session config carries under `experiment`. */
export const ExperimentTag = z.looseObject({
  id: z.string().min(1),
  suite: z.string().min(1),
  cell: z.string().min(1),
  cell_label: z.string(),
  /**
   * The cell's place in the suite's matrix: a report read from the store lists cells in it, as
   * the runner does (absent in runs recorded before it: the order their first session was made).
   */
  cell_order: z.number().int().min(0).optional(),
  scenario: z.string().min(1),
  category: ScenarioCategory,
  repetition: z.number().int().min(1),
  /** `${cell}/${scenario}/${repetition}`: what resume looks for. */
  run_key: z.string().min(1),
  expect: z.array(TurnExpectation),
  /** Absent in runs recorded before issue 13: `all_rounds`. */
  scoring: Scoring.optional(),
  bfcl_answer: BfclAnswer.optional(),
  /**
   * JSON Schema `type` of each parameter of each tool the run could call (`{tool: {param: type}}`),
   * for the number checks on the raw argument text (an integer parameter rejects `10.0`).
   */
  parameter_types: z.record(z.string(), z.record(z.string(), z.string())).optional(),
});
export type ExperimentTag = z.output<typeof ExperimentTag>;

/** What one turn of a run did, read back from the store. */
export interface TurnFacts {
  status: string;
  /** A failed turn's reason, `code: message` (absent: not failed, or no reason recorded). */
  error?: string;
  answer: string;
  rounds: number;
  /** Assistant messages recorded (model responses); absent in facts made before issue 13. */
  responses?: number;
  tool_calls: {
    name: string;
    arguments: Record<string, unknown>;
    /** The arguments as the model wrote them (absent or null when not recorded). */
    raw_arguments?: string | null;
    /** The turn's round (model response) that made the call, from 1 (absent: unknown). */
    round?: number;
    ok: boolean | null;
    used_fallback: boolean;
  }[];
  ttft_ms: number | null;
  wall_time_ms: number | null;
  prompt_tokens: number;
  cached_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  fallback_count: number;
  tool_count: number;
}

export interface RunScore {
  /** Precision and recall of the called tool names against the expected ones, over all turns. */
  tool_precision: number;
  tool_recall: number;
  /** Share of expected tool calls made with matching arguments. */
  argument_match: number;
  /** For turns that expect no tools: share of them that called none (null when none expect it). */
  irrelevance: number | null;
  /** Share of answer checks that passed (null when there are none). */
  answer: number | null;
  /** Every turn completed, within its round limit, and every check passed. */
  success: boolean;
  /** Why it failed, one line per failed check. */
  failures: string[];
}

/**
 * Where a cost comes from: every call priced by its provider (`reported`), every one by the lab's
 * price table (`estimated`), some of each (`mixed`), or at least one call with no price at all
 * (`unknown`, and the cost is null).
 */
export type CostSource = "reported" | "estimated" | "mixed" | "unknown";

export interface RunResult {
  session_id: string;
  run_key: string;
  cell: string;
  scenario: string;
  category: ScenarioCategory;
  repetition: number;
  turns: TurnFacts[];
  score: RunScore;
  cost_usd: number | null;
  cost_source: CostSource;
}

export interface CellSummary {
  cell: string;
  label: string;
  runs: number;
  successes: number;
  success_rate: number;
  /** Wilson score interval, 95%. */
  success_ci: [number, number];
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  wall_p50_ms: number | null;
  wall_p95_ms: number | null;
  tokens_per_turn: number;
  cached_share: number;
  /** Argument fallbacks per tool execution. */
  fallback_rate: number;
  /** Failed tool executions per tool execution. */
  tool_error_rate: number;
  cost_usd: number | null;
  cost_source: CostSource;
  by_category: Record<string, { runs: number; successes: number }>;
}

export interface ExperimentReport {
  experiment_id: string;
  suite: string;
  generated_at: string;
  simulated: boolean;
  cells: CellSummary[];
  runs: RunResult[];
}

/** An experiment as the list shows it. */
export interface ExperimentListItem {
  id: string;
  suite: string;
  /** Sessions tagged with the experiment: every attempt, incomplete and superseded ones included. */
  sessions: number;
  first_created_at: string;
  last_created_at: string;
  /** The latest change to any of its sessions (a run finishing moves it). */
  last_updated_at: string;
  /**
   * Moves with every write to one of its sessions but a running turn's middle rounds (its start
   * and end move it, and a report shows nothing of an unfinished run): a report built at one
   * revision is current.
   */
  revision: number;
}

/** A report, plus the runs it leaves out because they have not finished. */
export interface ExperimentReportWithProgress extends ExperimentReport {
  /**
   * Run keys with no finished session yet (a turn still running, cancelled or interrupted, or a
   * turn missing): not scored, not counted. A resumed run that finished is not among them.
   */
  incomplete: number;
}

/** One run of a cell, as the drill-down lists it. */
export interface CellRun {
  session_id: string;
  run_key: string;
  scenario: string;
  category: ScenarioCategory;
  repetition: number;
  /** Not finished (see `incomplete` above); no score. */
  incomplete: boolean;
  score: RunScore | null;
  cost_usd: number | null;
  cost_source: CostSource;
}
