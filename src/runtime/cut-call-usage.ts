import { type TokenUsage, tokenUsage } from "../domain/usage.js";
import type { ChatModelRequest } from "../providers/chat-model.js";
import { countPromptTokens, countTokens } from "../providers/tokenizer.js";

/** What a model call had produced when it was cut short (cancelled, or failed mid-stream). */
export interface CutCallProgress {
  text: string;
  tool_arguments: readonly string[];
  started_at: number;
  /** When the first text or tool call arrived, or null. */
  first_output_at: number | null;
}

/**
 * Token counts for a call that never got the endpoint's usage: the prompt as the lab's tokenizer
 * counts it, and the output that streamed before the cut. The endpoint billed at least this much;
 * the row says it is an estimate.
 */
export function estimateCutUsage(request: ChatModelRequest, progress: CutCallProgress): TokenUsage {
  const tools = request.tools ?? [];
  const prompt_tokens = countPromptTokens(
    request.messages,
    tools.length > 0 ? JSON.stringify(tools) : "",
  );
  let completion_tokens = countTokens(progress.text);
  for (const raw of progress.tool_arguments) completion_tokens += countTokens(raw);
  return tokenUsage({ prompt_tokens, completion_tokens });
}
