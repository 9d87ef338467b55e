import type { TokenUsage } from "../domain/usage.js";
import type { ChatModelRequest } from "../providers/chat-model.js";
import { estimateUsage, type StreamedOutput } from "../providers/usage-estimate.js";

/** What a model call had produced when it was cut short (cancelled, or failed mid-stream). */
export interface CutCallProgress extends Omit<StreamedOutput, "tool_arguments"> {
  /** Raw arguments by tool-call index, as far as they streamed. */
  tool_arguments: Map<number, string>;
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
    progress.tool_arguments.size > 0
  );
}

/**
 * Token counts for a call that never got the endpoint's usage: the prompt as the lab's tokenizer
 * counts it, and the output that streamed before the cut. The endpoint billed at least this much;
 * the row says it is an estimate.
 */
export function estimateCutUsage(request: ChatModelRequest, progress: CutCallProgress): TokenUsage {
  const tools = request.tools ?? [];
  return estimateUsage(request.messages, tools.length > 0 ? JSON.stringify(tools) : "", {
    ...progress,
    tool_arguments: progress.tool_arguments.values(),
  });
}
