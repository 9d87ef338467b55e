import { AgentLabError, InvalidInputError, ToolSourceError } from "../domain/errors.js";
import type { AgentConfig, LabSessionConfig } from "../domain/session-config.js";
import type { ChatModel } from "../providers/chat-model.js";
import type { ToolRegistry } from "../tools/registry.js";

/**
 * The runtime's ports to the outside: it never builds an adapter itself. The composition root
 * (`src/composition/`) implements them for the CLI, the server, experiments and benchmarks.
 */

/** One agent's config → the model that agent talks to. Throws (InvalidInputError) when it cannot. */
export interface ModelProvider {
  chatModel(agent: AgentConfig): ChatModel;
}

/**
 * A session config → the tools its turns may call, selected and validated. Async: an MCP server
 * lists its tools only once started, which happens on first need.
 */
export interface ToolProvider {
  toolsFor(config: LabSessionConfig, signal?: AbortSignal): Promise<ToolRegistry>;
}

export interface TurnProviders {
  models: ModelProvider;
  tools: ToolProvider;
}

/** What a turn runs on, built from its config. */
export interface PreparedTurn {
  chat_model: ChatModel;
  event_model: ChatModel;
  tools: ToolRegistry;
}

export interface PrepareTurnOptions {
  /** Models kept by a caller across turns (built once, e.g. for a long chat). */
  models?: { chat?: ChatModel | undefined; event?: ChatModel | undefined } | undefined;
  /** Put before the field in refusals, e.g. `request body: config.`. */
  field_prefix?: string;
  signal?: AbortSignal | undefined;
}

/**
 * The one answer to "can this config run?": builds both agents' models and the tool set, and
 * refuses with an InvalidInputError naming the config field at fault. Every caller (runTurn, the
 * CLI, the server, experiments) checks through here, so they cannot disagree.
 */
export async function prepareTurn(
  config: LabSessionConfig,
  providers: TurnProviders,
  options: PrepareTurnOptions = {},
): Promise<PreparedTurn> {
  const prefix = options.field_prefix ?? "";
  const chat_model =
    options.models?.chat ??
    field(prefix, "chat_agent", () => providers.models.chatModel(config.chat_agent));
  const event_model =
    options.models?.event ??
    field(prefix, "event_agent", () => providers.models.chatModel(config.event_agent));
  let tools: ToolRegistry;
  try {
    tools = await providers.tools.toolsFor(config, options.signal);
  } catch (error) {
    throw refusal(prefix, "tools", error);
  }
  return { chat_model, event_model, tools };
}

function field<T>(prefix: string, name: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    throw refusal(prefix, name, error);
  }
}

function refusal(prefix: string, name: string, error: unknown): unknown {
  // A server of the lab config that fails is not the config's fault: it keeps its own code.
  if (!(error instanceof AgentLabError) || error instanceof ToolSourceError) return error;
  return new InvalidInputError(`${prefix}${name}: ${error.message}`, { cause: error });
}
