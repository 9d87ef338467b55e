import { createChatModel } from "../providers/create-chat-model.js";
import type { OpenAIChatModelDependencies } from "../providers/openai/openai-chat-model.js";
import type { ModelProvider } from "../runtime/turn-providers.js";

/** The lab's models: `sim`, `sim:NAME`, `openai:MODEL`; `dependencies` hold the env with the keys. */
export function createModelProvider(dependencies: OpenAIChatModelDependencies = {}): ModelProvider {
  return { chatModel: (agent) => createChatModel(agent, dependencies) };
}
