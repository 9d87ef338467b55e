import { z } from "zod";
import { KeyVariable } from "./key-variable.js";

/**
 * The OpenAI-compatible gateway (`/v1`): what a client sends, how the lab config names upstreams,
 * and how a gateway session is marked. Any agent that speaks Chat Completions points its base URL
 * at the lab and is recorded like a native session.
 */

/** Names the session a request belongs to; created on first use. */
export const SESSION_HEADER = "x-agent-lab-session";
/** `dual_agent` or `chat_agent_tools` (pass-through, the default); wins over the upstream's mode. */
export const MODE_HEADER = "x-agent-lab-mode";

/** A function tool as a Chat Completions request declares it. */
export const RequestTool = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});
export type RequestTool = z.output<typeof RequestTool>;

const RequestToolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal("function").optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

/** Text, or a list of parts of which the text parts are read (images pass through untouched). */
const RequestContent = z
  .union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))])
  .nullish();

/** One message as clients send it: `developer` is OpenAI's newer name for `system`. */
export const RequestMessage = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool"]),
  content: RequestContent,
  name: z.string().optional(),
  tool_calls: z.array(RequestToolCall).nullish(),
  tool_call_id: z.string().optional(),
});
export type RequestMessage = z.output<typeof RequestMessage>;

/**
 * A Chat Completions request, read leniently: every field the lab does not interpret (temperature,
 * response_format, seed, …) is kept and, in pass-through, sent upstream as the client wrote it.
 */
export const ChatCompletionRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(RequestMessage).min(1, "give at least one message"),
  tools: z.array(RequestTool).optional(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  temperature: z.number().nullish(),
  // One choice per answer: a turn records one answer, and the client would get only the first.
  n: z.literal(1, { error: "only n: 1 is supported (a turn records one answer)" }).nullish(),
});
export type ChatCompletionRequest = z.output<typeof ChatCompletionRequest>;

/**
 * `upstreams:` in agent-lab.yaml: a name a client may put in `model`, the endpoint behind it, and
 * the name of the variable holding its key. `pass_client_key: true` sends the client's own key
 * upstream instead (the client then authenticates to the lab with the lab token in
 * `X-Agent-Lab-Token`).
 */
export const GatewayUpstream = z.strictObject({
  base_url: z.string().url(),
  /** The model name sent upstream. */
  model: z.string().min(1),
  api_key_env: KeyVariable.optional(),
  pass_client_key: z.boolean().default(false),
  /** The mode for requests that do not say (`X-Agent-Lab-Mode` wins). */
  // The modes of session-config.ts, named here: that file imports the lab config's tool shapes.
  mode: z.enum(["chat_agent_tools", "dual_agent"]).default("chat_agent_tools"),
  /**
   * The event agent of `dual_agent`: a lab model string (`sim`, `openai:MODEL`) or another
   * upstream's name; default the same endpoint and model.
   */
  event_model: z.string().min(1).optional(),
  /**
   * Whether each call's request body and raw stream are kept (a session config's
   * `capture.payloads`): `auto` keeps them for a loopback endpoint only.
   */
  capture: z.enum(["auto", "on", "off"]).default("auto"),
  /** Adapter options (max_retries, timeout_ms, …) as a session config's `options`. */
  options: z.record(z.string(), z.unknown()).default({}),
});
export type GatewayUpstream = z.output<typeof GatewayUpstream>;

/** Upstream names share the model-string space: `sim` and `openai:…` are the lab's own. */
export const UpstreamName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits, ., _ and - only")
  .refine((name) => name !== "sim", "sim is the simulated model's name");

/**
 * Kept in a gateway session's config under `gateway`: where its requests went, and how the session
 * was found. The session list tags gateway sessions `gateway`.
 */
export const GatewaySessionMark = z.strictObject({
  /** The request's `model` as the client wrote it. */
  requested_model: z.string(),
  /** The upstream's name, or null for a lab model string (`sim`, `openai:…`). */
  upstream: z.string().nullable(),
  /** `header` (X-Agent-Lab-Session) or `conversation` (grouped by history and idle gap). */
  grouped_by: z.enum(["header", "conversation"]),
});
export type GatewaySessionMark = z.output<typeof GatewaySessionMark>;

export const GATEWAY_TAG = "gateway";
