import { InvalidInputError } from "../domain/errors.js";
import type { ChatModel } from "./chat-model.js";
import { OpenAIChatModel, type OpenAIChatModelDependencies } from "./openai/openai-chat-model.js";
import { SimChatModel } from "./sim/sim-chat-model.js";

/** What a session config says about one agent's model (see DESIGN.md, "Session config"). */
export interface ModelSelection {
  /** `sim`, `sim:NAME` or `openai:MODEL`. */
  model: string;
  base_url?: string | undefined;
  api_key_env?: string | undefined;
  /** Adapter options: SimOptions for `sim`, OpenAI config fields (max_retries, …) for `openai`. */
  options?: Record<string, unknown> | undefined;
}

export const MODEL_STRING_HELP = "use sim, sim:NAME or openai:MODEL";

/** `sim`, `sim:NAME` or `openai:MODEL`: a string createChatModel takes (its options aside). */
export function isModelString(model: string): boolean {
  return model === "sim" || model.startsWith("sim:") || /^openai:\S/.test(model);
}

/** The one place a model string becomes an adapter; the runtime only ever sees the port. */
export function createChatModel(
  selection: ModelSelection,
  dependencies: OpenAIChatModelDependencies = {},
): ChatModel {
  const { model, base_url, api_key_env, options = {} } = selection;
  const separator = model.indexOf(":");
  const provider = separator === -1 ? model : model.slice(0, separator);
  const name = separator === -1 ? "" : model.slice(separator + 1);
  if (provider === "sim") {
    if (base_url !== undefined || api_key_env !== undefined) {
      throw new InvalidInputError(
        `model ${model}: the simulated model takes no base_url or api_key_env`,
      );
    }
    return new SimChatModel(name ? { name, options } : { options });
  }
  if (provider === "openai" && name) {
    return new OpenAIChatModel(
      {
        ...options,
        model: name,
        ...(base_url !== undefined ? { base_url } : {}),
        ...(api_key_env !== undefined ? { api_key_env } : {}),
      },
      dependencies,
    );
  }
  throw new InvalidInputError(
    `model: ${JSON.stringify(model)} is not a model string; ${MODEL_STRING_HELP}`,
  );
}
