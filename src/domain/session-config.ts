import { z } from "zod";
import { ApprovalOverrides, DEFAULT_APPROVAL_TIMEOUT_MS } from "./approvals.js";
import { CaptureConfig } from "./call-capture.js";
import {
  describeTooDeep,
  findMalformedText,
  findTooDeep,
  LONE_SURROGATE_MESSAGE,
  MAX_CONFIG_DEPTH,
} from "./json-limits.js";
import { Limits } from "./limits.js";
import { PriceTable } from "./prices.js";
import { findCredentialProblems, type JsonPath } from "./secrets.js";
import { DeclaredTool } from "./tool-sources.js";

interface IssueSink {
  addIssue(issue: { code: "custom"; path: JsonPath; message: string }): void;
}

/**
 * What every stored config must be, wherever it comes from (the store, HTTP, an import, a suite):
 * bounded in depth (checked first, since the other checks recurse), valid Unicode, and free of
 * credentials. `prefix` places the issues inside a larger document.
 */
export function checkStorableConfig(
  config: unknown,
  context: IssueSink,
  prefix: JsonPath = [],
): void {
  const tooDeep = findTooDeep(config, MAX_CONFIG_DEPTH);
  if (tooDeep !== null) {
    context.addIssue({
      code: "custom",
      path: [...prefix, ...tooDeep.slice(0, 2)],
      message: describeTooDeep(tooDeep, MAX_CONFIG_DEPTH),
    });
    return;
  }
  for (const path of findMalformedText(config)) {
    context.addIssue({
      code: "custom",
      path: [...prefix, ...path],
      message: LONE_SURROGATE_MESSAGE,
    });
  }
  for (const { path, message } of findCredentialProblems(config)) {
    context.addIssue({ code: "custom", path: [...prefix, ...path], message });
  }
  for (const { path, message } of findToolSourceDefinitions(config)) {
    context.addIssue({ code: "custom", path: [...prefix, ...path], message });
  }
  if (isRecord(config) && config.tags !== undefined) {
    const tags = SessionTags.safeParse(config.tags);
    for (const issue of tags.success ? [] : tags.error.issues) {
      context.addIssue({
        code: "custom",
        path: [...prefix, "tags", ...(issue.path as JsonPath)],
        message: issue.message,
      });
    }
  }
}

export const MAX_SESSION_TAGS = 16;

/** One label a session list can be filtered by (`?tag=`): short, and safe in a URL as it is. */
export const SessionTag = z
  .string({ error: "a tag is a string" })
  .min(1, "a tag is 1 to 64 characters")
  .max(64, "a tag is 1 to 64 characters")
  .regex(/^[A-Za-z0-9_.:-]+$/, "a tag holds only letters, digits and _ . : -");

/**
 * A session's tags (config `tags`), checked wherever a config is stored (checkStorableConfig), so
 * the store, an import and a suite refuse the same tags with the same message.
 */
export const SessionTags = z
  .array(SessionTag, { error: "tags is a list of strings" })
  .max(MAX_SESSION_TAGS, `a session has at most ${MAX_SESSION_TAGS} tags`);

const LAB_CONFIG_ONLY =
  "is defined only in the lab config file (agent-lab.yaml); a session selects its tools by name in tools";

/**
 * MCP servers and HTTP tools start commands and reach URLs, so only the machine's owner may define
 * them (the lab config file). A config from a request, an import or a suite that tries is refused,
 * naming the field, rather than having the key ignored: the sender would think it took effect.
 */
function findToolSourceDefinitions(config: unknown): { path: JsonPath; message: string }[] {
  if (!isRecord(config)) return [];
  const problems: { path: JsonPath; message: string }[] = [];
  for (const key of ["mcp_servers", "http_tools"]) {
    if (key in config) {
      const what = key === "mcp_servers" ? "an MCP server" : "an HTTP tool";
      problems.push({ path: [key], message: `${what} ${LAB_CONFIG_ONLY}` });
    }
  }
  // `tools` holds names; an object there is refused by its schema with the same explanation.
  const declared = config.declared_tools;
  if (Array.isArray(declared)) {
    declared.forEach((entry, index) => {
      if (!isRecord(entry)) return;
      for (const key of ["command", "url"]) {
        if (key in entry) {
          problems.push({
            path: ["declared_tools", index, key],
            message: `a tool with a ${key} (MCP or HTTP) ${LAB_CONFIG_ONLY}`,
          });
        }
      }
    });
  }
  return problems;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

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
  .superRefine(checkStorableConfig);
export type SessionConfig = z.output<typeof SessionConfig>;
export type SessionConfigInput = z.input<typeof SessionConfig>;

/** The mode of a stored config; configs written before the mode existed mean the default. */
export function modeOf(config: Record<string, unknown>): ToolInvocationMode {
  const parsed = ToolInvocationMode.safeParse(config.tool_invocation_mode);
  return parsed.success ? parsed.data : DEFAULT_TOOL_INVOCATION_MODE;
}

/** One agent's model and prompt (DESIGN.md, "Session config"). Unknown keys are kept. */
export const AgentConfig = z.looseObject({
  /** `sim`, `sim:NAME` or `openai:MODEL`. */
  model: z.string().min(1).default("sim"),
  base_url: z.string().min(1).optional(),
  /** The *name* of the environment variable holding the key. */
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
    .optional(),
  temperature: z.number().min(0).max(2).optional(),
  /**
   * Sent with each of this agent's calls, as OpenAI names them (`max_tokens` is the one every
   * compatible server reads). The sim honours `max_tokens` and `stop`, and takes the others.
   */
  max_tokens: z.number().int().min(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  seed: z.number().int().optional(),
  stop: z.array(z.string().min(1)).min(1).max(4).optional(),
  system_prompt: z.string().optional(),
  /** Adapter options (sim: first_token_ms, tokens_per_second, …; openai: max_retries, …). */
  options: z.record(z.string(), z.unknown()).default({}),
});
export type AgentConfig = z.output<typeof AgentConfig>;

export const DEFAULT_TOOLS = ["mock_search", "mock_ticket"] as const;

/** A tool's name; an object with a command or a URL is a definition, which only the lab file holds. */
const ToolSelection = z
  .string({
    error: (issue) =>
      isRecord(issue.input) && ("command" in issue.input || "url" in issue.input)
        ? `a tool with a command or url (MCP or HTTP) ${LAB_CONFIG_ONLY}`
        : undefined,
  })
  .min(1);

/**
 * The full config the runtime reads. Everything has a default, so `{}` is a working session on the
 * simulated model with the built-in tools.
 */
/**
 * A config that names a chat agent but no event agent gets an event agent on the same endpoint
 * and model: an `openai:` session must not fall back to the simulated model unasked.
 */
export function eventAgentFollowsChatAgent(input: unknown): unknown {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return input;
  const config = input as Record<string, unknown>;
  const chat = config.chat_agent;
  if (config.event_agent !== undefined || chat === null || typeof chat !== "object") return input;
  const { model, base_url, api_key_env } = chat as Record<string, unknown>;
  return { ...config, event_agent: { model, base_url, api_key_env } };
}

const LabSessionConfigShape = z
  .looseObject({
    tool_invocation_mode: ToolInvocationMode.default(DEFAULT_TOOL_INVOCATION_MODE),
    chat_agent: AgentConfig.prefault({}),
    event_agent: AgentConfig.prefault({}),
    tools: z.array(ToolSelection).default([...DEFAULT_TOOLS]),
    /** Mock tools defined inline, offered beside `tools` (absent means none). */
    declared_tools: z.array(DeclaredTool).optional(),
    max_rounds: z.number().int().min(1).max(50).default(6),
    limits: Limits.prefault({}),
    /** Overrides a tool's `requires_approval`, by tool name: `{ mock_ticket: false }`. */
    approvals: ApprovalOverrides.default({}),
    /** A call waiting longer than this for a decision is denied (decided_by `timeout`). */
    approval_timeout_ms: z.number().int().min(1).default(DEFAULT_APPROVAL_TIMEOUT_MS),
    /** Keeps each call's request body and raw stream (see call-capture.ts). */
    capture: CaptureConfig.prefault({}),
    /** Extends or overrides the price table by model string, as a suite's `prices` do. */
    prices: PriceTable.default({}),
    /** Labels the session list can filter by (checked by checkStorableConfig). */
    tags: z.array(z.string()).optional(),
  })
  .superRefine(checkStorableConfig);
export const LabSessionConfig = z.preprocess(eventAgentFollowsChatAgent, LabSessionConfigShape);
export type LabSessionConfig = z.output<typeof LabSessionConfigShape>;
export type LabSessionConfigInput = z.input<typeof LabSessionConfigShape>;
