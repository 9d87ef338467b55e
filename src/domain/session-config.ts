import { z } from "zod";
import { findSecretKeys } from "./secrets.js";

export const ToolInvocationMode = z.enum(["chat_agent_tools", "dual_agent"]);
export type ToolInvocationMode = z.infer<typeof ToolInvocationMode>;

export const DEFAULT_TOOL_INVOCATION_MODE: ToolInvocationMode = "dual_agent";

/**
 * A session's configuration. Only the mode is interpreted by the store; every other key is kept
 * as given (the seed stores arbitrary config), except secrets, which belong in the environment.
 */
export const SessionConfig = z
  .looseObject({
    tool_invocation_mode: ToolInvocationMode.default(DEFAULT_TOOL_INVOCATION_MODE),
  })
  .superRefine((config, context) => {
    for (const path of findSecretKeys(config)) {
      context.addIssue({
        code: "custom",
        path,
        message:
          "secrets are never stored with a session; put the key in an environment variable and name it with api_key_env",
      });
    }
  });
export type SessionConfig = z.output<typeof SessionConfig>;
export type SessionConfigInput = z.input<typeof SessionConfig>;

/** The mode of a stored config; configs written before the mode existed mean the default. */
export function modeOf(config: Record<string, unknown>): ToolInvocationMode {
  const parsed = ToolInvocationMode.safeParse(config.tool_invocation_mode);
  return parsed.success ? parsed.data : DEFAULT_TOOL_INVOCATION_MODE;
}
