import { readFileSync } from "node:fs";
import { InvalidInputError } from "../domain/errors.js";
import {
  type AgentConfig,
  LabSessionConfig,
  type ToolInvocationMode,
} from "../domain/session-config.js";
import { parseInput } from "../domain/validation.js";
import { prepareTurn, type TurnProviders } from "../runtime/turn-providers.js";
import { fileErrorReason } from "./files.js";

/** The `run` flags that shape a new session's config. */
export interface SessionConfigFlags {
  config?: string | undefined;
  mode?: ToolInvocationMode | undefined;
  model?: string | undefined;
  eventModel?: string | undefined;
  baseUrl?: string | undefined;
  system?: string | undefined;
  systemFile?: string | undefined;
}

export interface RequestedConfig {
  /** The full config for a new session: the file, then the flags over it. */
  config: LabSessionConfig;
  /** The mode the user asked for explicitly (flag or file), checked against an existing session. */
  explicit_mode: ToolInvocationMode | undefined;
  /** Flags that only shape a new session (an existing one keeps its stored config). */
  new_session_flags: string[];
}

/** Reads and validates a JSON session config file; errors name the file and the field. */
export function readSessionConfigFile(path: string): {
  config: LabSessionConfig;
  has_mode: boolean;
  has_event_agent: boolean;
} {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new InvalidInputError(`config file ${path}: ${fileErrorReason(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(
      `config file ${path}: not valid JSON (${(error as Error).message})`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidInputError(`config file ${path}: must be a JSON object`);
  }
  return {
    config: parseInput(LabSessionConfig, value, `config file ${path}`),
    has_mode: "tool_invocation_mode" in value,
    has_event_agent: "event_agent" in value,
  };
}

/**
 * The config a `run` asks for: the `--config` file (or the defaults), with `--mode`, `--model`,
 * `--event-model` and `--base-url` over it. Both agents' models and the tool selection are built
 * once here, so a bad model string, a base URL on a simulated model or an unknown tool is refused
 * before anything is stored (runTurn would create the session before refusing them).
 */
export async function requestedSessionConfig(
  flags: SessionConfigFlags,
  providers: TurnProviders,
): Promise<RequestedConfig> {
  const file = flags.config === undefined ? undefined : readSessionConfigFile(flags.config);
  const base = file?.config ?? LabSessionConfig.parse({});
  const system_prompt = systemPromptOf(flags);
  const chat_agent: AgentConfig = {
    ...base.chat_agent,
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(system_prompt !== undefined ? { system_prompt } : {}),
  };
  // Unless an event agent is named, it follows the chat agent: `--model openai:X` alone must not
  // pair a real chat agent with the simulated one.
  const event_agent: AgentConfig =
    flags.eventModel !== undefined || file?.has_event_agent
      ? {
          ...base.event_agent,
          ...(flags.eventModel !== undefined ? { model: flags.eventModel } : {}),
        }
      : {
          ...base.event_agent,
          model: chat_agent.model,
          ...(chat_agent.base_url !== undefined ? { base_url: chat_agent.base_url } : {}),
          ...(chat_agent.api_key_env !== undefined ? { api_key_env: chat_agent.api_key_env } : {}),
        };
  if (flags.baseUrl !== undefined) {
    const openai = [chat_agent, event_agent].filter((agent) => agent.model.startsWith("openai:"));
    if (openai.length === 0) {
      throw new InvalidInputError(
        `--base-url applies to openai:MODEL models, and neither the chat agent (${chat_agent.model}) nor the event agent (${event_agent.model}) uses one; pick one with --model or --event-model`,
      );
    }
    for (const agent of openai) agent.base_url = flags.baseUrl;
  }
  const config = parseInput(
    LabSessionConfig,
    {
      ...base,
      ...(flags.mode !== undefined ? { tool_invocation_mode: flags.mode } : {}),
      chat_agent,
      event_agent,
    },
    "session config",
  );
  await prepareTurn(config, providers);
  const new_session_flags = [
    flags.config !== undefined ? "--config" : null,
    flags.model !== undefined ? "--model" : null,
    flags.eventModel !== undefined ? "--event-model" : null,
    flags.baseUrl !== undefined ? "--base-url" : null,
    flags.system !== undefined ? "--system" : null,
    flags.systemFile !== undefined ? "--system-file" : null,
  ].filter((flag): flag is string => flag !== null);
  return {
    config,
    explicit_mode: flags.mode ?? (file?.has_mode ? base.tool_invocation_mode : undefined),
    new_session_flags,
  };
}

/** `--system TEXT` or `--system-file FILE`; an empty prompt is refused (it would be sent as is). */
function systemPromptOf(flags: SessionConfigFlags): string | undefined {
  if (flags.system !== undefined && flags.systemFile !== undefined) {
    throw new InvalidInputError("give --system or --system-file, not both");
  }
  let text = flags.system;
  if (flags.systemFile !== undefined) {
    try {
      text = readFileSync(flags.systemFile, "utf8");
    } catch (error) {
      throw new InvalidInputError(`--system-file ${flags.systemFile}: ${fileErrorReason(error)}`);
    }
  }
  if (text !== undefined && text.trim() === "") {
    const where = flags.systemFile !== undefined ? `--system-file ${flags.systemFile}` : "--system";
    throw new InvalidInputError(`${where}: the system prompt is empty`);
  }
  return text;
}
