import { tokenUsage } from "../domain/usage.js";
import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../providers/chat-model.js";
import { countTokens, promptTokens } from "../providers/tokenizer.js";

/** One scripted answer: text (streamed in pieces), thinking, and tool calls, in that order. */
export interface ScriptedAnswer {
  text?: string;
  reasoning?: string;
  tool_calls?: readonly {
    name: string;
    arguments: Record<string, unknown> | string;
    id?: string;
  }[];
  /** Default "tool_calls" when there are tool calls, else "stop". */
  finish_reason?: string;
}

/** What one call does: answer, or fail with this error (thrown after `response-start`). */
export type ScriptedStep = ScriptedAnswer | { error: Error };

/**
 * A ChatModel that plays a script, one step per call, in order, as the lab's ports promise
 * (response-start, first-token, deltas, tool calls, usage counted with the lab's tokenizer,
 * finish). Every request is kept in `requests`. A call past the end of the script throws, so a
 * test learns that its agent made more calls than it expected.
 *
 *   const model = new ScriptedChatModel([
 *     { tool_calls: [{ name: "mock_search", arguments: { query: "lab" } }] },
 *     { text: "Found it." },
 *   ]);
 *   for await (const event of runTurn({ store, message: "search", models: { chat: model }, ... }))
 */
export class ScriptedChatModel implements ChatModel {
  readonly provider = "scripted";
  readonly simulated = true;
  readonly requests: ChatModelRequest[] = [];
  readonly #steps: ScriptedStep[];

  constructor(
    steps: readonly ScriptedStep[],
    readonly model = "scripted",
  ) {
    this.#steps = [...steps];
  }

  /** Steps not yet played. */
  get pending(): number {
    return this.#steps.length;
  }

  async *stream(
    request: ChatModelRequest,
    options: StreamOptions = {},
  ): AsyncGenerator<ChatModelPart> {
    this.requests.push(request);
    const call = this.requests.length;
    const step = this.#steps.shift();
    if (step === undefined) {
      throw new Error(`ScriptedChatModel: call ${call} has no scripted step left`);
    }
    options.signal?.throwIfAborted();
    yield { type: "response-start", attempt: 1, status: 200, request_id: null, at_ms: 0 };
    if ("error" in step) throw step.error;
    if (step.reasoning) yield { type: "reasoning-delta", text: step.reasoning };
    yield { type: "first-token", ttft_ms: 0 };
    for (const piece of pieces(step.text ?? "")) {
      options.signal?.throwIfAborted();
      yield { type: "text-delta", text: piece };
    }
    const calls = (step.tool_calls ?? []).map((scripted, index) => ({
      index,
      id: scripted.id ?? `call_${call}_${index}`,
      name: scripted.name,
      raw_arguments:
        typeof scripted.arguments === "string"
          ? scripted.arguments
          : JSON.stringify(scripted.arguments),
    }));
    for (const toolCall of calls) {
      const { index, id, name, raw_arguments } = toolCall;
      yield { type: "tool-call-delta", index, id, name, arguments_delta: raw_arguments };
      yield { type: "tool-call", ...toolCall };
    }
    const completion = [step.reasoning, step.text, ...calls.map((c) => c.name + c.raw_arguments)];
    yield {
      type: "usage",
      usage: tokenUsage({
        prompt_tokens: promptTokens(request.messages).length,
        completion_tokens: countTokens(completion.filter(Boolean).join("")),
      }),
      estimated: false,
      source: "endpoint",
      cost_usd: null,
      raw: null,
    };
    yield {
      type: "finish",
      finish_reason: step.finish_reason ?? (calls.length > 0 ? "tool_calls" : "stop"),
      ttft_ms: 0,
      elapsed_ms: 0,
      attempts: 1,
      response_model: this.model,
      response_id: `scripted-${call}`,
      system_fingerprint: null,
    };
  }
}

/** Text in pieces of a few words, as a model streams it. */
function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}
