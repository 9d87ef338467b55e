import type { OpenAIChatModelDependencies } from "../providers/openai/openai-chat-model.js";
import { type RunTurnOptions, runTurn as runtimeRunTurn } from "../runtime/run-turn.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import type { Tool } from "../tools/tool.js";
import { createLabProviders } from "./lab-providers.js";

/** runTurn's options with the providers optional: built from `tools` / `model_dependencies`. */
export type LabRunTurnOptions = Omit<RunTurnOptions, "providers"> & {
  providers?: TurnProviders | undefined;
  /** The in-process tools the config may select from; default the built-ins. */
  tools?: readonly Tool[] | undefined;
  model_dependencies?: OpenAIChatModelDependencies | undefined;
};

/** runTurn for callers that have no providers of their own (tests, the library's users). */
export function runTurn(options: LabRunTurnOptions): ReturnType<typeof runtimeRunTurn> {
  const { tools, model_dependencies, providers, ...rest } = options;
  return runtimeRunTurn({
    ...rest,
    providers: providers ?? createLabProviders({ builtins: tools, model_dependencies }),
  });
}
