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

/**
 * `content` is a string on every server we know, but the spec also allows a list of parts: text
 * parts, and Mistral's thinking parts (`{type:"thinking", thinking:[{type:"text", text}]}`).
 */
const DeltaContent = z
  .union([
    z.string(),
    z.array(
      z.looseObject({
        type: z.string(),
        text: z.unknown().optional(),
        thinking: z.unknown().optional(),
      }),
    ),
  ])
  .nullish();
type DeltaContent = z.infer<typeof DeltaContent>;

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

/**
 * The reasoning a delta carries beside its content: `reasoning_content` (DeepSeek, xAI, llama.cpp,
 * Z.ai, vLLM) or `reasoning` (Ollama, OpenRouter, Groq). A server that sends both sends the same
 * text twice, so the first one present is taken.
 */
export function deltaReasoning(delta: Fields): string {
  const { reasoning_content, reasoning } = delta;
  if (typeof reasoning_content === "string" && reasoning_content.length > 0) {
    return reasoning_content;
  }
  return typeof reasoning === "string" ? reasoning : "";
}

/** The text of a content delta: the string itself, or the text parts of a list, joined. */
export function contentText(content: DeltaContent): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) {
    if (part.type === "text" && typeof part.text === "string") text += part.text;
  }
  return text;
}

/** The thinking parts of a content list (Mistral), as one string; `thinking` may be a string too. */
export function contentThinking(content: DeltaContent): string {
  if (content === null || content === undefined || typeof content === "string") return "";
  let text = "";
  for (const part of content) {
    if (part.type !== "thinking") continue;
    const { thinking } = part;
    if (typeof thinking === "string") text += thinking;
    else if (Array.isArray(thinking)) {
      for (const item of thinking) {
        if (isObject(item) && typeof item.text === "string") text += item.text;
      }
    }
  }
  return text;
}

export type Fields = Record<string, unknown>;
export const isObject = (value: unknown): value is Fields =>
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
 * The shape nearly every chunk has (one choice, string content, reasoning or tool-call deltas, no
 * usage or error), checked by hand. On a long stream zod's generality costs about as much as JSON.parse
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
  // Reasoning and refusal fields are read by the decoder whatever their type, as the schema
  // (which leaves them loose) does; only content and tool calls need checking here.
  const { content, tool_calls } = delta;
  if (!isOptionalString(content)) return false;
  if (tool_calls === null || tool_calls === undefined) return true;
  if (!Array.isArray(tool_calls)) return false;
  for (const call of tool_calls) if (!isCommonToolCall(call)) return false;
  return true;
}
