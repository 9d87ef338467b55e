import { z } from "zod";
import { BfclAnswer, Scenario, type ScenarioCategory } from "../../domain/experiment.js";
import { describeIssues } from "../../domain/validation.js";
import { type FunctionLanguage, SUPPORTED_CATEGORIES } from "./bfcl-categories.js";
import { convertFunction } from "./bfcl-function.js";

/**
 * One BFCL case as a scenario: its functions become the scenario's tools, its system messages the
 * scenario's system prompt, its user messages the one turn, its possible answer `bfcl_answer`,
 * scored on the first response as BFCL does. A case the lab cannot replay faithfully is refused
 * with the reason, for the import summary.
 */

/** Only the id first: a case of a category that cannot be imported need not have the rest. */
export const CaseId = z.looseObject({ id: z.string().min(1) });

const Message = z.looseObject({ role: z.string().min(1), content: z.string() });

export const BfclCase = z.looseObject({
  id: z.string().min(1),
  /** Turns of messages; single-turn categories have one. */
  question: z.array(z.array(Message)).min(1),
  function: z.array(
    z.looseObject({
      name: z.string().min(1),
      description: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
    }),
  ),
});
export type BfclCase = z.output<typeof BfclCase>;

export const PossibleAnswer = z.looseObject({ id: z.string().min(1), ground_truth: BfclAnswer });
export type PossibleAnswer = z.output<typeof PossibleAnswer>;

/** The scenario as written to the suite file: only what differs from the defaults. */
export type ScenarioInput = z.input<typeof Scenario>;

export type CaseOutcome = { scenario: ScenarioInput } | { skipped: string };

export function caseToScenario(
  entry: BfclCase,
  category: string,
  language: FunctionLanguage,
  answer: BfclAnswer | undefined,
): CaseOutcome {
  if (entry.question.length !== 1) {
    return {
      skipped: `a multi-turn question (${entry.question.length} turns); BFCL's single-turn categories have one`,
    };
  }
  const messages = entry.question[0] ?? [];
  const other = messages.find((message) => message.role !== "system" && message.role !== "user");
  if (other !== undefined) {
    return {
      skipped: `the question replays a conversation (it holds a message with role "${other.role}"); a scenario's turn is the user's messages only`,
    };
  }
  const joined = (role: string) =>
    messages
      .filter((message) => message.role === role)
      .map((message) => message.content)
      .join("\n\n");
  const user = joined("user");
  if (user.trim() === "") return { skipped: "the question has no user message" };
  const system = joined("system");
  const tools = entry.function.map((doc) => convertFunction(doc, language));
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) {
      return {
        skipped: `two functions are named ${JSON.stringify(tool.name)} once dots become underscores`,
      };
    }
    names.add(tool.name);
  }
  const labCategory = SUPPORTED_CATEGORIES[category] as ScenarioCategory;
  const expect =
    labCategory === "irrelevance"
      ? { no_tools: true }
      : labCategory === "relevance"
        ? { any_tool: true }
        : undefined;
  const candidate: ScenarioInput = {
    id: entry.id,
    category: labCategory,
    ...(system.trim() === "" ? {} : { system_prompt: system }),
    tools,
    turns: [{ user, ...(expect === undefined ? {} : { expect }) }],
    scoring: "first_response" as const,
    ...(answer === undefined ? {} : { bfcl_answer: answer }),
    origin: { benchmark: "bfcl" as const, id: entry.id, category },
  };
  const parsed = Scenario.safeParse(candidate);
  if (!parsed.success) {
    return { skipped: `not a valid scenario: ${describeIssues(parsed.error)}` };
  }
  // Checked against the schema, written as built: the suite file stays free of defaults.
  return { scenario: candidate };
}
