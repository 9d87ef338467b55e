import type { OpenAIChatModelDependencies } from "../providers/openai/openai-chat-model.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import type { Tool } from "../tools/tool.js";
import type { ToolSource } from "../tools/tool-source.js";
import { createModelProvider } from "./model-provider.js";
import { createToolProvider, type LabToolProvider } from "./tool-provider.js";

/** The composition root: the one place adapters (models, tool sources) are chosen. */
export interface LabProviderOptions {
  /** The OpenAI adapter's environment (keys) and fetch. */
  model_dependencies?: OpenAIChatModelDependencies | undefined;
  /** The in-process tools; default the built-ins. */
  builtins?: readonly Tool[] | undefined;
  /** The lab config file's sources. */
  sources?: readonly ToolSource[] | undefined;
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
