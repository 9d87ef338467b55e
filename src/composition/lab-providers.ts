import type { LabConfigFile } from "../domain/tool-sources.js";
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

/** The providers of a command, with the lab config file they came from. */
export interface LabProvidersWithConfig extends LabProviders {
  /** The file's path; null when none was found. */
  lab_config: string | null;
  /** The file as parsed (read once: the server's gateway reads its `upstreams`). */
  lab_config_file: LabConfigFile | null;
}

/**
 * The providers of a CLI command or a server: the lab config file found from `location` (see
 * findLabConfig) gives the sources; none found, only the built-ins and declared tools.
 */
export function createLabProvidersFor(
  location: LabConfigLocation,
  options: Omit<LabProviderOptions, "sources"> = {},
): LabProvidersWithConfig {
  const path = findLabConfig(location);
  const file = path === null ? null : loadLabConfig(path);
  const sources = file === null ? [] : labToolSources(file);
  return {
    ...createLabProviders({ ...options, sources }),
    lab_config: path,
    lab_config_file: file,
  };
}
