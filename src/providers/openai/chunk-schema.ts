import { z } from "zod";

/**
 * One streamed Chat Completions chunk, read leniently: OpenAI-compatible servers (vLLM, Ollama,
 * llama.cpp, LM Studio, OpenRouter, Gemini's compatibility layer) differ in which fields they send
 * and whether they send `null` or nothing, so every field is optional and unknown keys pass. Only
 * shapes we could not interpret at all (say `choices` that is not a list) are refused.
 */

const count = z.number().nonnegative().nullish();

export const ChunkUsage = z.looseObject({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: z.looseObject({ cached_tokens: count }).nullish(),
});
export type ChunkUsage = z.infer<typeof ChunkUsage>;

/** `content` is a string on every server we know, but the spec also allows a list of text parts. */
const DeltaContent = z
  .union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.unknown().optional() }))])
  .nullish();

export const ToolCallChunk = z.looseObject({
  /** Gemini's compatibility layer omits the index; the decoder then places calls by id. */
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  function: z
    .looseObject({
      name: z.string().nullish(),
      arguments: z.string().nullish(),
    })
    .nullish(),
});
export type ToolCallChunk = z.infer<typeof ToolCallChunk>;

export const ChoiceChunk = z.looseObject({
  index: z.number().int().nullish(),
  delta: z
    .looseObject({
      content: DeltaContent,
      // Some servers send `false` or other non-strings here; anything but a string is no refusal.
      refusal: z.unknown().optional(),
      tool_calls: z.array(ToolCallChunk).nullish(),
    })
    .nullish(),
  finish_reason: z.string().nullish(),
});
export type ChoiceChunk = z.infer<typeof ChoiceChunk>;

/** An error reported inside a 200 stream, as `{"error": {...}}` or `{"error": "text"}`. */
export const ErrorPayload = z.union([
  z.string(),
  z.looseObject({ message: z.unknown().optional(), type: z.unknown().optional() }),
]);

export const CompletionChunk = z.looseObject({
  choices: z.array(ChoiceChunk).nullish(),
  usage: ChunkUsage.nullish(),
  error: ErrorPayload.nullish(),
});
export type CompletionChunk = z.infer<typeof CompletionChunk>;

/** `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama), when not empty. */
export function hasReasoning(delta: unknown): boolean {
  if (typeof delta !== "object" || delta === null) return false;
  const { reasoning_content, reasoning } = delta as Record<string, unknown>;
  return (
    (typeof reasoning_content === "string" && reasoning_content.length > 0) ||
    (typeof reasoning === "string" && reasoning.length > 0)
  );
}

/** The text of a content delta: the string itself, or the text parts of a list, joined. */
export function contentText(content: z.infer<typeof DeltaContent>): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .flatMap((part) => (part.type === "text" && typeof part.text === "string" ? [part.text] : []))
    .join("");
}

type Fields = Record<string, unknown>;
const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isOptionalString = (value: unknown) =>
  value === null || value === undefined || typeof value === "string";

function isCommonToolCall(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { index, id, function: fn } = value;
  if (
    !(
      index === null ||
      index === undefined ||
      (Number.isSafeInteger(index) && (index as number) >= 0)
    )
  ) {
    return false;
  }
  if (!isOptionalString(id)) return false;
  if (fn === null || fn === undefined) return true;
  return isObject(fn) && isOptionalString(fn.name) && isOptionalString(fn.arguments);
}

/**
 * The shape nearly every chunk has (one choice, string content or tool-call deltas, no usage or
 * error), checked by hand. On a long stream zod's generality costs about as much as JSON.parse
 * itself; this guard accepts only what `CompletionChunk` accepts (a property test holds it to
 * that), and everything else still goes through the schema, with its errors naming the field.
 */
export function isCommonChunk(value: unknown): value is CompletionChunk {
  if (!isObject(value)) return false;
  const { choices, usage, error } = value;
  if ((usage !== null && usage !== undefined) || (error !== null && error !== undefined))
    return false;
  if (!Array.isArray(choices) || choices.length !== 1) return false;
  const choice: unknown = choices[0];
  if (!isObject(choice)) return false;
  const { index, delta, finish_reason } = choice;
  if (!(index === null || index === undefined || Number.isSafeInteger(index))) return false;
  if (!isOptionalString(finish_reason)) return false;
  if (delta === null || delta === undefined) return true;
  if (!isObject(delta)) return false;
  const { content, refusal, tool_calls } = delta;
  if (!isOptionalString(content) || (refusal !== null && refusal !== undefined)) return false;
  if (tool_calls === null || tool_calls === undefined) return true;
  return Array.isArray(tool_calls) && tool_calls.every(isCommonToolCall);
}
