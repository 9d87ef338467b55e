import { z } from "zod";
import { SamplingSettings } from "../../runtime/modes/agent-sampling.js";
import type { FollowUpSettings } from "./gateway-turn-setup.js";

/** Where the lab's own ranges apply: it writes the model's request itself. */
const LAB_WRITES = "when the lab sends the request itself (dual_agent, sim)";

/** An agent config's ranges, so the gateway checks what a session stores. */
const AGENT = SamplingSettings.shape;

/**
 * The request's sampling fields, each in AgentConfig's range, as OpenAI names them (`stop` may
 * also be one string, as OpenAI takes it; the temperature's refusal says when the range applies).
 */
const SAMPLING = {
  temperature: z
    .number()
    .min(0, `must be at least 0 ${LAB_WRITES}`)
    .max(2, `must be at most 2 ${LAB_WRITES}`),
  max_completion_tokens: AGENT.max_tokens.unwrap(),
  max_tokens: AGENT.max_tokens.unwrap(),
  top_p: AGENT.top_p.unwrap(),
  seed: AGENT.seed.unwrap(),
  stop: z.union([z.string().min(1), AGENT.stop.unwrap()]),
} as const;

type SamplingName = keyof typeof SAMPLING;

/**
 * Each field checked as the one key of an object, so a refusal names it as `param`. Made once:
 * schemas built per request were a measurable part of the gateway's time to first token.
 */
const CHECKS = Object.fromEntries(
  Object.entries(SAMPLING).map(([name, schema]) => [name, z.strictObject({ [name]: schema })]),
) as unknown as {
  [Name in SamplingName]: z.ZodType<Record<Name, z.output<(typeof SAMPLING)[Name]>>>;
};

/**
 * The request's sampling settings as the session's chat agent records them and, when the lab
 * writes the model's request itself, sends them with each of the turn's calls. In pass-through the
 * request goes upstream as sent and the upstream judges it (vLLM and Ollama take values OpenAI
 * refuses): a value outside the lab's range is left out of the record. When the lab writes the
 * request, such a value is refused (400 naming it) before any call is made. A null is no setting.
 */
export function requestSampling(
  body: Readonly<Record<string, unknown>>,
  passThrough: boolean,
): SamplingSettings {
  const valid = <Name extends SamplingName>(name: Name) => {
    const value = body[name];
    if (value === undefined || value === null) return undefined;
    const checked = CHECKS[name].safeParse({ [name]: value });
    if (checked.success) return checked.data[name];
    if (passThrough) return undefined;
    throw checked.error;
  };
  const sampling: SamplingSettings = {};
  const temperature = valid("temperature");
  if (temperature !== undefined) sampling.temperature = temperature;
  // OpenAI's newer name wins over the one it deprecated, as OpenAI reads them.
  const maxTokens = valid("max_completion_tokens") ?? valid("max_tokens");
  if (maxTokens !== undefined) sampling.max_tokens = maxTokens;
  const topP = valid("top_p");
  if (topP !== undefined) sampling.top_p = topP;
  const seed = valid("seed");
  if (seed !== undefined) sampling.seed = seed;
  // An empty stop (`""`, `[]`), as some clients send for none, is no stop sequence.
  const given = body.stop;
  const stop =
    given === "" || (Array.isArray(given) && given.length === 0) ? undefined : valid("stop");
  if (stop !== undefined) sampling.stop = typeof stop === "string" ? [stop] : stop;
  return sampling;
}

const PARALLEL_CALLS = z.strictObject({ parallel_tool_calls: z.boolean().nullish() });

/**
 * Whether the client takes several tool calls in one answer (unless it says
 * `parallel_tool_calls: false`). When the lab writes the request, anything but a boolean is
 * refused (400 naming the field); in pass-through the upstream judges it.
 */
export function parallelCalls(
  body: Readonly<Record<string, unknown>>,
  passThrough: boolean,
): boolean {
  if (passThrough) return body.parallel_tool_calls !== false;
  const parallel = PARALLEL_CALLS.safeParse({ parallel_tool_calls: body.parallel_tool_calls });
  if (!parallel.success) throw parallel.error;
  return parallel.data.parallel_tool_calls !== false;
}

/** A follow-up's own settings, when the lab writes the model's request itself. */
export function followUpSettings(body: Readonly<Record<string, unknown>>): FollowUpSettings {
  return {
    sampling: requestSampling(body, false),
    parallel_tool_calls: parallelCalls(body, false),
  };
}

const RENDERED_TOOL_CHOICE = z.strictObject({
  tool_choice: z
    .enum(["auto", "none"], {
      error: `${LAB_WRITES}, a tool call cannot be forced: the model is asked in the lab's own words (dual_agent: an event catalog) and may answer without one; send "auto" or "none", or send the request in pass-through (chat_agent_tools on an OpenAI-compatible upstream)`,
    })
    .nullish(),
});

const RENDERED_FORMAT = z.strictObject({
  response_format: z
    .looseObject({
      type: z.literal("text", {
        error: `${LAB_WRITES}, the answer cannot be held to a format (dual_agent's chat agent writes its calls as tags in its text); send the request in pass-through (chat_agent_tools on an OpenAI-compatible upstream), or without response_format`,
      }),
    })
    .nullish(),
});

/**
 * The request's `tools` as the turn offers them when the lab writes the model's request itself:
 * all of them, or none for `tool_choice: "none"`. A choice the lab cannot honour (`required`, a
 * named function) and a `response_format` other than text are refused (400 naming the field)
 * rather than dropped unsaid: an agent that relies on them would get an answer it cannot use.
 * In pass-through both go upstream as sent, so this is not asked.
 */
export function renderedTools<Tool>(
  body: Readonly<Record<string, unknown>>,
  tools: readonly Tool[],
): readonly Tool[] {
  const choice = RENDERED_TOOL_CHOICE.safeParse({ tool_choice: body.tool_choice });
  if (!choice.success) throw choice.error;
  const format = RENDERED_FORMAT.safeParse({ response_format: body.response_format });
  if (!format.success) throw format.error;
  return choice.data.tool_choice === "none" ? [] : tools;
}
