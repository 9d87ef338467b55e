import { leastDisturbed } from "./measure.js";

/**
 * The streams the provider benchmark's endpoint serves: content, reasoning or tool-call deltas, in
 * two lengths. The difference between the two is what one more chunk costs; the short one is
 * mostly what a call costs whatever its length.
 */
export const LONG_CHUNKS = 1_000;
export const SHORT_CHUNKS = 100;
export type StreamLength = "long" | "short";
export const chunksOf = (length: StreamLength) => (length === "long" ? LONG_CHUNKS : SHORT_CHUNKS);

/** What one more chunk costs: the long streams' CPU less the short ones', per chunk between them. */
export function cpuPerChunk(samples: {
  long: readonly number[];
  short: readonly number[];
}): number {
  return perChunk(leastDisturbed(samples.long), leastDisturbed(samples.short));
}

/** The CPU of the chunks between a short stream's and a long one's, per chunk. */
export function perChunk(long: number, short: number): number {
  return (long - short) / (LONG_CHUNKS - SHORT_CHUNKS);
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "bench-model",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  })}\n\n`;
}

function usageEvent(chunks: number, details: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "bench-model",
    system_fingerprint: "fp_bench",
    choices: [],
    usage: {
      prompt_tokens: 12,
      completion_tokens: chunks,
      total_tokens: chunks + 12,
      prompt_tokens_details: { cached_tokens: 0 },
      ...details,
    },
  })}\n\n`;
}

export function textStream(chunks: number): string {
  const parts = [chunk({ role: "assistant", content: "" })];
  for (let index = 0; index < chunks; index++) parts.push(chunk({ content: `word${index % 50} ` }));
  parts.push(chunk({}, "stop"), usageEvent(chunks), "data: [DONE]\n\n");
  return parts.join("");
}

/**
 * A thinking model's stream (DeepSeek, llama.cpp, vLLM): most chunks carry `reasoning_content`,
 * the answer comes last; its usage reports the reasoning tokens.
 */
export function reasoningStream(chunks: number): string {
  const answer = chunks / 5;
  const parts = [chunk({ role: "assistant", content: null, reasoning_content: "" })];
  for (let index = 0; index < chunks - answer; index++) {
    parts.push(chunk({ content: null, reasoning_content: `thought${index % 50} ` }));
  }
  for (let index = 0; index < answer; index++) parts.push(chunk({ content: `word${index % 50} ` }));
  const usage = usageEvent(chunks, {
    completion_tokens_details: { reasoning_tokens: chunks - answer },
    prompt_cache_hit_tokens: 0,
    prompt_cache_miss_tokens: 12,
  });
  parts.push(chunk({}, "stop"), usage, "data: [DONE]\n\n");
  return parts.join("");
}

export function toolCallStream(chunks: number): string {
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
  for (let index = 0; index < chunks - 2; index++) {
    parts.push(chunk({ tool_calls: [{ index: 0, function: { arguments: `w${index % 50} ` } }] }));
  }
  parts.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] }));
  parts.push(chunk({}, "tool_calls"), usageEvent(chunks), "data: [DONE]\n\n");
  return parts.join("");
}
