/**
 * The TurnEvent variants (src/domain/turn-events.ts) as JSON Schema properties, one entry per
 * `type`, for the OpenAPI document: the SSE event name of each is its `type`.
 */

type JsonObject = Record<string, unknown>;

const object = (properties: JsonObject, required = Object.keys(properties)): JsonObject => ({
  type: "object",
  properties,
  required,
});

const rollupProperties = {
  turn_index: { type: "integer" },
  prompt_tokens: { type: "integer" },
  completion_tokens: { type: "integer" },
  total_tokens: { type: "integer" },
  cached_tokens: { type: "integer" },
  reasoning_tokens: { type: "integer" },
  cache_write_tokens: { type: "integer" },
  elapsed_ms: { type: "number" },
  call_count: { type: "integer" },
  fallback_count: { type: "integer" },
  tool_count: { type: "integer" },
  estimated_count: { type: "integer" },
  cost_usd: {
    type: ["number", "null"],
    description: "the calls' costs summed (provider-reported where given, else the price table's)",
  },
  reported_cost_count: { type: "integer" },
  unpriced_count: { type: "integer" },
  turn_wall_time_ms: { type: ["number", "null"] },
};

const costSource = {
  enum: ["reported", "estimated", null],
  description: "reported: the provider's own figure; estimated: the lab's price table",
};

const toolCallEvent = object({
  id: { type: "string" },
  name: { type: "string" },
  arguments: { type: "object" },
  raw_arguments: { type: "string" },
});

/** One variant per TurnEvent type (src/domain/turn-events.ts); the SSE event name is `type`. */
export const TURN_EVENTS: Record<string, JsonObject> = {
  turn_start: {
    session_id: { type: "string" },
    turn_index: { type: "integer" },
    mode: { enum: ["chat_agent_tools", "dual_agent"] },
    simulated: { type: "boolean" },
  },
  round_start: { round_index: { type: "integer" } },
  text_delta: { round_index: { type: "integer" }, text: { type: "string" } },
  reasoning_delta: { round_index: { type: "integer" }, text: { type: "string" } },
  refusal_delta: { round_index: { type: "integer" }, text: { type: "string" } },
  retry: {
    round_index: { type: "integer" },
    agent: { enum: ["chat_agent", "event_agent", "event_kernel"] },
    attempt: { type: "integer" },
    status: { type: ["integer", "null"] },
    reason: { type: "string" },
    delay_ms: { type: "number" },
  },
  tool_call: { round_index: { type: "integer" }, event: toolCallEvent },
  fallback_start: {
    round_index: { type: "integer" },
    event_id: { type: "string" },
    event_name: { type: "string" },
    reason: { type: "string" },
  },
  fallback_end: {
    round_index: { type: "integer" },
    event_id: { type: "string" },
    ok: { type: "boolean" },
    event: { anyOf: [toolCallEvent, { type: "null" }] },
    error: { type: ["string", "null"] },
  },
  approval_required: {
    round_index: { type: "integer" },
    event_id: { type: "string" },
    event_name: { type: "string" },
    arguments: { type: "object" },
    timeout_ms: { type: "number" },
  },
  approval_decided: {
    round_index: { type: "integer" },
    event_id: { type: "string" },
    event_name: { type: "string" },
    decision: { enum: ["approve", "deny"] },
    decided_by: { enum: ["user", "policy", "timeout"] },
    reason: { type: ["string", "null"] },
    arguments: { type: ["object", "null"] },
    wait_ms: { type: "number" },
  },
  tool_result: {
    round_index: { type: "integer" },
    event_id: { type: "string" },
    event_name: { type: "string" },
    ok: { type: "boolean" },
    content: { type: "string" },
    latency_ms: { type: "number" },
    used_fallback: { type: "boolean" },
  },
  usage: {
    round_index: { type: "integer" },
    agent: { enum: ["chat_agent", "event_agent", "event_kernel"] },
    call_kind: { enum: ["chat_completion", "argument_fallback", "tool_execution"] },
    metric_key: { type: "string" },
    usage: object({
      prompt_tokens: { type: "integer" },
      completion_tokens: { type: "integer" },
      total_tokens: { type: "integer" },
      cached_tokens: { type: "integer" },
      reasoning_tokens: { type: "integer" },
      cache_write_tokens: { type: "integer" },
    }),
    estimated: { type: "boolean" },
    usage_source: { enum: ["endpoint", "estimated", "provider_timings"] },
    cost_usd: { type: ["number", "null"] },
    cost_source: costSource,
    response_model: { type: ["string", "null"] },
    ttft_ms: { type: ["number", "null"] },
    elapsed_ms: { type: "number" },
  },
  round_end: {
    round_index: { type: "integer" },
    finish_reason: { type: ["string", "null"] },
    tool_calls: { type: "integer" },
  },
  error: { code: { type: "string" }, message: { type: "string" } },
  turn_end: {
    session_id: { type: "string" },
    turn_index: { type: "integer" },
    status: { enum: ["completed", "cancelled", "failed", "max_rounds"] },
    answer: { type: "string" },
    wall_time_ms: { type: "number" },
    usage: object(rollupProperties),
  },
};
