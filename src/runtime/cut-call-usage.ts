import { type TokenUsage, tokenUsage } from "../domain/usage.js";
import type { ChatModelRequest } from "../providers/chat-model.js";
import { countPromptTokens, countTokens } from "../providers/tokenizer.js";

/** What a model call had produced when it was cut short (cancelled, or failed mid-stream). */
export interface CutCallProgress {
  text: string;
  /** Thinking that streamed before the cut: billed as completion tokens like the answer. */
  reasoning: string;
  refusal: string;
  tool_arguments: readonly string[];
  started_at: number;
  /** When the first text, reasoning or tool call arrived, or null. */
  first_output_at: number | null;
}

/** Whether anything streamed, so the endpoint billed output the lab must count. */
export function producedOutput(progress: CutCallProgress): boolean {
  return (
    progress.text !== "" ||
    progress.reasoning !== "" ||
    progress.refusal !== "" ||
    progress.tool_arguments.length > 0
  );
}

/**
 * Token counts for a call that never got the endpoint's usage: the prompt as the lab's tokenizer
 * counts it, and the output that streamed before the cut, reasoning included (it is inside the
 * completion, as the endpoint would bill it). The endpoint billed at least this much; the row
 * says it is an estimate.
 */
export function estimateCutUsage(request: ChatModelRequest, progress: CutCallProgress): TokenUsage {
  const tools = request.tools ?? [];
  const prompt_tokens = countPromptTokens(
    request.messages,
    tools.length > 0 ? JSON.stringify(tools) : "",
  );
  const reasoning_tokens = countTokens(progress.reasoning);
  let completion_tokens =
    countTokens(progress.text) + reasoning_tokens + countTokens(progress.refusal);
  for (const raw of progress.tool_arguments) completion_tokens += countTokens(raw);
  return tokenUsage({ prompt_tokens, completion_tokens, reasoning_tokens });
}
