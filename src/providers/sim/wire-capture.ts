import type { TokenUsage } from "../../domain/usage.js";
import type { CallCapture, ChatModelPart, ChatModelRequest } from "../chat-model.js";
import { renderRequestBody } from "../openai/request-body.js";

/**
 * What an OpenAI-compatible endpoint would have seen and sent for a simulated call, for payload
 * capture: the Chat Completions request body the openai adapter would send for the same request,
 * and the SSE stream carrying the same parts (text and `<event>` tags as `content`, thinking as
 * `reasoning_content`, tool calls as `tool_calls` deltas, then the finish reason, the usage chunk
 * and `[DONE]`). Deterministic, like the sim: `created` is 0 and the id comes from the request.
 */
export class SimWireCapture {
  readonly #capture: CallCapture;
  readonly #head: { id: string; object: string; created: number; model: string };

  constructor(capture: CallCapture, model: string, id: string, request: ChatModelRequest) {
    this.#capture = capture;
    this.#head = { id, object: "chat.completion.chunk", created: 0, model };
    capture.request(JSON.stringify(renderRequestBody(model, request)));
  }

  /** The first chunk, as OpenAI sends it: the role, no content yet. */
  start(): void {
    this.#chunk({ role: "assistant", content: "" }, null);
  }

  delta(part: ChatModelPart): void {
    if (part.type === "text-delta") this.#chunk({ content: part.text }, null);
    else if (part.type === "reasoning-delta") this.#chunk({ reasoning_content: part.text }, null);
    else if (part.type === "tool-call-delta") {
      const call: Record<string, unknown> = { index: part.index };
      if (part.id !== null) Object.assign(call, { id: part.id, type: "function" });
      const fn: Record<string, unknown> = { arguments: part.arguments_delta };
      if (part.name !== null) fn.name = part.name;
      this.#chunk({ tool_calls: [{ ...call, function: fn }] }, null);
    }
  }

  end(finishReason: string, usage: TokenUsage): void {
    this.#chunk({}, finishReason);
    this.#send({
      ...this.#head,
      choices: [],
      usage: {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
        prompt_tokens_details: { cached_tokens: usage.cached_tokens },
        completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
      },
    });
    this.#capture.response("data: [DONE]\n\n");
  }

  #chunk(delta: Record<string, unknown>, finishReason: string | null): void {
    this.#send({
      ...this.#head,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  }

  #send(chunk: Record<string, unknown>): void {
    this.#capture.response(`data: ${JSON.stringify(chunk)}\n\n`);
  }
}
