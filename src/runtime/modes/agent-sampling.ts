import { AgentConfig } from "../../domain/session-config.js";
import type { ChatModelRequest } from "../../providers/chat-model.js";

export type AgentSampling = Pick<
  ChatModelRequest,
  "temperature" | "max_tokens" | "top_p" | "seed" | "stop"
>;

/** The sampling settings as an agent's config holds them, in its ranges. */
export const SamplingSettings = AgentConfig.pick({
  temperature: true,
  max_tokens: true,
  top_p: true,
  seed: true,
  stop: true,
}).strict();
export type SamplingSettings = Pick<
  AgentConfig,
  "temperature" | "max_tokens" | "top_p" | "seed" | "stop"
>;

/**
 * The sampling settings an agent's config names, sent with each of its calls; a setting the config
 * does not name is not sent, so the endpoint's own default applies.
 */
export function samplingOf(agent: SamplingSettings): AgentSampling {
  const sampling: AgentSampling = {};
  if (agent.temperature !== undefined) sampling.temperature = agent.temperature;
  if (agent.max_tokens !== undefined) sampling.max_tokens = agent.max_tokens;
  if (agent.top_p !== undefined) sampling.top_p = agent.top_p;
  if (agent.seed !== undefined) sampling.seed = agent.seed;
  if (agent.stop !== undefined) sampling.stop = agent.stop;
  return sampling;
}

/**
 * The agent with `sampling` in place of the settings its config names: a turn whose settings are
 * its own (a gateway request's) sends those, and none of the session's that it leaves out.
 */
export function withSampling(agent: AgentConfig, sampling: SamplingSettings): AgentConfig {
  const { temperature, max_tokens, top_p, seed, stop, ...rest } = agent;
  return { ...rest, ...sampling };
}

/**
 * The request with `sampling` in place of the settings it was written with: a gateway follow-up's
 * call is sent with that follow-up's settings (none it leaves out), as its upstream would get them.
 */
export function requestWithSampling(
  request: ChatModelRequest,
  sampling: SamplingSettings,
): ChatModelRequest {
  const { temperature, max_tokens, top_p, seed, stop, ...rest } = request;
  return { ...rest, ...samplingOf(sampling) };
}
