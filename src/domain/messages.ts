import { z } from "zod";
import { ToolCallEvent } from "./events.js";

export const MessageRole = z.enum(["system", "user", "assistant", "tool"]);
export type MessageRole = z.infer<typeof MessageRole>;

/**
 * The rules a strict Chat Completions endpoint enforces on one message, shared by every schema of a
 * message (input, export) so a bad message is refused before it can poison a history.
 */
export function checkMessageProtocol(
  message: {
    role: string;
    tool_call_id?: string | null | undefined;
    tool_calls: readonly unknown[];
  },
  context: z.RefinementCtx,
): void {
  if (
    message.role === "tool" &&
    (message.tool_call_id === undefined || message.tool_call_id === null)
  ) {
    context.addIssue({
      code: "custom",
      path: ["tool_call_id"],
      message: "a tool message needs the tool_call_id it answers",
    });
  }
  if (message.role !== "assistant" && message.tool_calls.length > 0) {
    context.addIssue({
      code: "custom",
      path: ["tool_calls"],
      message: `only assistant messages carry tool_calls, not ${message.role} messages`,
    });
  }
}

/** The canonical stored message. */
export const ChatMessage = z
  .strictObject({
    role: MessageRole,
    content: z.string(),
    name: z.string().min(1).optional(),
    tool_call_id: z.string().min(1).optional(),
    tool_calls: z.array(ToolCallEvent).default([]),
    /**
     * An assistant's thinking (`reasoning_content`, `reasoning`, thinking parts, a leading
     * `<think>` block), kept beside the answer, never in it. Sent back only to endpoints that
     * need it (the openai adapter's `send_reasoning`).
     */
    reasoning: z.string().optional(),
    /** The text of an assistant's refusal (a `refusal` delta); `content` holds only an answer. */
    refusal: z.string().optional(),
  })
  .superRefine(checkMessageProtocol);
export type ChatMessage = z.output<typeof ChatMessage>;
export type ChatMessageInput = z.input<typeof ChatMessage>;
