import type { OpenAIChatModelDependencies } from "../providers/openai/openai-chat-model.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import type { Tool } from "../tools/tool.js";
import {
  findLabConfig,
  type LabConfigLocation,
  labToolSources,
  loadLabConfig,
} from "./lab-config.js";
import { createModelProvider } from "./model-provider.js";
import {
  createToolProvider,
  type LabToolProvider,
  type PrefixedToolSource,
} from "./tool-provider.js";

/** The composition root: the one place adapters (models, tool sources) are chosen. */
export interface LabProviderOptions {
  /** The OpenAI adapter's environment (keys) and fetch. */
  model_dependencies?: OpenAIChatModelDependencies | undefined;
  /** The in-process tools; default the built-ins. */
  builtins?: readonly Tool[] | undefined;
  /** The lab config file's sources. */
  sources?: readonly PrefixedToolSource[] | undefined;
}

export interface LabProviders extends TurnProviders {
  tools: LabToolProvider;
}

export function createLabProviders(options: LabProviderOptions = {}): LabProviders {
  return {
    models: createModelProvider(options.model_dependencies),
    tools: createToolProvider({ builtins: options.builtins, sources: options.sources }),
  };
}

/**
 * The providers of a CLI command or a server: the lab config file found from `location` (see
 * findLabConfig) gives the sources; none found, only the built-ins and declared tools.
 */
export function createLabProvidersFor(
  location: LabConfigLocation,
  options: Omit<LabProviderOptions, "sources"> = {},
): LabProviders & { lab_config: string | null } {
  const path = findLabConfig(location);
  const sources = path === null ? [] : labToolSources(loadLabConfig(path));
  return { ...createLabProviders({ ...options, sources }), lab_config: path };
}
