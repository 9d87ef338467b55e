import type { ExperimentTag, Scenario, Suite } from "../domain/experiment.js";
import { runParameterTypes } from "./parameter-types.js";

/** What one run of an experiment is configured with, from its cell, suite, scenario and repetition. */

/**
 * The cell's config with the repetition's seed, the scenario's tools and system prompt, and the
 * suite's prices (the runtime prices each call by the session config's `prices`).
 */
export function runConfigOf(
  cellConfig: Record<string, unknown>,
  suite: Suite,
  scenario: Scenario,
  repetition: number,
): Record<string, unknown> {
  const seeded = withRepetitionSeed(cellConfig, repetition);
  return {
    ...seeded,
    ...declaredToolsOf(seeded, suite, scenario),
    ...systemPromptOf(seeded, scenario),
    ...pricesOf(seeded, suite),
  };
}

/** The suite's prices under the config's own: a named config's `prices` is the more specific. */
function pricesOf(config: Record<string, unknown>, suite: Suite): { prices?: unknown } {
  const own = config.prices;
  const ownPrices = typeof own === "object" && own !== null ? own : {};
  if (Object.keys(suite.prices).length === 0) return own === undefined ? {} : { prices: own };
  return { prices: { ...suite.prices, ...ownPrices } };
}

/**
 * A run's declared tools: the config's, then the suite's, then the scenario's; a later one of the
 * same name replaces an earlier one, so a scenario can give a suite-wide tool other answers.
 */
function declaredToolsOf(
  config: Record<string, unknown>,
  suite: Suite,
  scenario: Scenario,
): { declared_tools?: unknown[] } {
  const fromConfig = Array.isArray(config.declared_tools) ? config.declared_tools : [];
  const byName = new Map<unknown, unknown>();
  for (const tool of [...fromConfig, ...suite.tools, ...scenario.tools]) {
    const name = (tool as { name?: unknown } | null)?.name;
    byName.delete(name);
    byName.set(name, tool);
  }
  return byName.size === 0 ? {} : { declared_tools: [...byName.values()] };
}

/** A scenario's system prompt replaces the cell's for the chat agent. */
function systemPromptOf(
  config: Record<string, unknown>,
  scenario: Scenario,
): { chat_agent?: Record<string, unknown> } {
  if (scenario.system_prompt === undefined) return {};
  const chat = config.chat_agent;
  const agent = typeof chat === "object" && chat !== null ? (chat as Record<string, unknown>) : {};
  return { chat_agent: { ...agent, system_prompt: scenario.system_prompt } };
}

/**
 * The simulated model is deterministic: without a seed of their own, repetitions would replay one
 * another. Each repetition gets the next seed (unless the suite set one), so a seeded rate such as
 * `malformed_arguments_rate` varies across repetitions as it would across real calls.
 */
function withRepetitionSeed(
  config: Record<string, unknown>,
  repetition: number,
): Record<string, unknown> {
  const seeded = { ...config };
  for (const role of ["chat_agent", "event_agent"] as const) {
    const agent = seeded[role] as
      | { model?: unknown; options?: Record<string, unknown> }
      | undefined;
    if (!agent || typeof agent.model !== "string" || !agent.model.startsWith("sim")) continue;
    if (agent.options?.seed !== undefined) continue;
    seeded[role] = { ...agent, options: { ...agent.options, seed: 41 + repetition } };
  }
  return seeded;
}

/**
 * What the run's tag carries for scoring beyond its expectations: the scenario's scoring mode and
 * BFCL answer, and the parameter types of the tools the run can call (see parameter-types.ts).
 */
export function scoringRulesOf(
  scenario: Scenario,
  config: Record<string, unknown>,
): Pick<ExperimentTag, "scoring" | "bfcl_answer" | "parameter_types"> {
  const types = runParameterTypes(config);
  return {
    ...(scenario.scoring !== undefined ? { scoring: scenario.scoring } : {}),
    ...(scenario.bfcl_answer !== undefined ? { bfcl_answer: scenario.bfcl_answer } : {}),
    ...(Object.keys(types).length > 0 ? { parameter_types: types } : {}),
  };
}
