/**
 * The streams the provider benchmark's endpoint serves: CHUNKS content, reasoning or tool-call
 * deltas each.
 */
export const CHUNKS = 1_000;

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "bench-model",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  })}\n\n`;
}

function usageEvent(details: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "bench-model",
    system_fingerprint: "fp_bench",
    choices: [],
    usage: {
      prompt_tokens: 12,
      completion_tokens: CHUNKS,
      total_tokens: CHUNKS + 12,
      prompt_tokens_details: { cached_tokens: 0 },
      ...details,
    },
  })}\n\n`;
}

const usage = usageEvent();

export function textStream(): string {
  const parts = [chunk({ role: "assistant", content: "" })];
  for (let index = 0; index < CHUNKS; index++) parts.push(chunk({ content: `word${index % 50} ` }));
  parts.push(chunk({}, "stop"), usage, "data: [DONE]\n\n");
  return parts.join("");
}

/**
 * A thinking model's stream (DeepSeek, llama.cpp, vLLM): most chunks carry `reasoning_content`,
 * the answer comes last; its usage reports the reasoning tokens.
 */
export function reasoningStream(): string {
  const answer = CHUNKS / 5;
  const parts = [chunk({ role: "assistant", content: null, reasoning_content: "" })];
  for (let index = 0; index < CHUNKS - answer; index++) {
    parts.push(chunk({ content: null, reasoning_content: `thought${index % 50} ` }));
  }
  for (let index = 0; index < answer; index++) parts.push(chunk({ content: `word${index % 50} ` }));
  parts.push(chunk({}, "stop"), reasoningUsage, "data: [DONE]\n\n");
  return parts.join("");
}

const reasoningUsage = usageEvent({
  completion_tokens_details: { reasoning_tokens: CHUNKS - CHUNKS / 5 },
  prompt_cache_hit_tokens: 0,
  prompt_cache_miss_tokens: 12,
});

export function toolCallStream(): string {
  const parts = [
    chunk({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          index: 0,
          id: "call_bench",
          type: "function",
          function: { name: "mock_search", arguments: "" },
        },
      ],
    }),
  ];
  parts.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"query":"' } }] }));
  for (let index = 0; index < CHUNKS - 2; index++) {
    parts.push(chunk({ tool_calls: [{ index: 0, function: { arguments: `w${index % 50} ` } }] }));
  }
  parts.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] }));
  parts.push(chunk({}, "tool_calls"), usage, "data: [DONE]\n\n");
  return parts.join("");
}
