import { randomBytes } from "node:crypto";
import type { TokenUsage } from "../../domain/usage.js";
import type { FinishReason } from "../../providers/chat-model.js";

/**
 * What the gateway sends back when the answer is the lab's own rendering rather than an
 * upstream's bytes (the sim model; `dual_agent`, whose tool calls come from the event kernel):
 * Chat Completions as clients parse it, streamed (`chat.completion.chunk` SSE events ending in
 * `data: [DONE]`) or whole (one `chat.completion` object). Pure: no I/O, no clock except the
 * default `created`.
 *
 * The shapes follow what openai-node's ChatCompletionStream and the AI SDK's
 * openai-compatible provider require: every chunk carries the same `id`, `object`, `created`
 * (seconds) and `model` (the name the client asked for, as OpenAI echoes it); the first chunk has
 * `delta.role: "assistant"` (openai-node refuses a final message without a role); each tool call
 * goes whole in one chunk with its index, id, type, name and arguments (both clients assemble
 * calls from deltas, and a first delta may as well be the whole call); the finish reason has a
 * chunk of its own; usage comes last in a chunk with no choices, only when the client asked for
 * it (`stream_options.include_usage`), as OpenAI does.
 */

/** OpenAI's `usage` object, with the two details the lab counts. */
export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface CompletionToolCall {
  /** The call's place among the answer's calls; default its order of writing. */
  index?: number;
  id: string;
  name: string;
  /** The arguments as JSON text (the validated or repaired arguments in `dual_agent`). */
  arguments: string;
}

/** A tool call as the wire carries it. */
export interface WireCompletionToolCall {
  index: number;
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChunkDelta {
  role?: "assistant";
  content?: string;
  reasoning_content?: string;
  refusal?: string;
  tool_calls?: WireCompletionToolCall[];
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: {
    index: 0;
    delta: ChunkDelta;
    logprobs: null;
    finish_reason: FinishReason | null;
  }[];
  usage?: CompletionUsage;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: [
    {
      index: 0;
      message: {
        role: "assistant";
        content: string | null;
        refusal: string | null;
        reasoning_content?: string;
        tool_calls?: Omit<WireCompletionToolCall, "index">[];
      };
      logprobs: null;
      finish_reason: FinishReason;
    },
  ];
  usage: CompletionUsage;
}

/** Who answers: the same on every chunk of one response. */
export interface CompletionIdentity {
  /** The model the client asked for (OpenAI echoes the request's model). */
  model: string;
  /** Default a fresh `chatcmpl-…`. */
  id?: string;
  /** Unix seconds; default now. */
  created?: number;
}

export interface CompletionChunkWriterOptions extends CompletionIdentity {
  /** The client's `stream_options.include_usage`: only then is the usage chunk sent. */
  include_usage: boolean;
}

/** A response id in OpenAI's form: `chatcmpl-` and 24 random letters and digits. */
export function newCompletionId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let id = "chatcmpl-";
  for (const byte of randomBytes(24)) id += alphabet[byte % alphabet.length];
  return id;
}

/** The lab's token counts in OpenAI's shape (cached inside prompt, reasoning inside completion). */
export function completionUsage(usage: TokenUsage): CompletionUsage {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.total_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
  };
}

export const SSE_DONE = "data: [DONE]\n\n";

/**
 * A streamed answer, event by event: each method returns the SSE text to write (`data: {json}`
 * and a blank line), or "" when there is nothing to send (an empty delta). `finish` ends the
 * stream: the finish chunk, the usage chunk when asked for, and `data: [DONE]`.
 */
export class CompletionChunkWriter {
  readonly id: string;
  readonly created: number;
  /** The model the chunks name; the serving model's once known (`servedBy`). */
  model: string;
  readonly #includeUsage: boolean;
  #started = false;
  #finished = false;
  #toolCalls = 0;

  constructor(options: CompletionChunkWriterOptions) {
    this.id = options.id ?? newCompletionId();
    this.created = options.created ?? Math.floor(Date.now() / 1000);
    this.model = options.model;
    this.#includeUsage = options.include_usage;
  }

  text(delta: string): string {
    return delta === "" ? "" : this.#choiceChunk({ content: delta }, null);
  }

  /** Thinking, as `reasoning_content` (DeepSeek's field, which the AI SDK reads). */
  reasoning(delta: string): string {
    return delta === "" ? "" : this.#choiceChunk({ reasoning_content: delta }, null);
  }

  refusal(delta: string): string {
    return delta === "" ? "" : this.#choiceChunk({ refusal: delta }, null);
  }

  /** One whole call in one chunk. */
  toolCall(call: CompletionToolCall): string {
    const wire = wireToolCall(call, this.#toolCalls);
    this.#toolCalls += 1;
    return this.#choiceChunk({ tool_calls: [wire] }, null);
  }

  /** The end of the answer: finish chunk, usage chunk (when the client asked), `[DONE]`. */
  finish(finish_reason: FinishReason, usage: TokenUsage): string {
    let text = this.#choiceChunk({}, finish_reason);
    this.#finished = true;
    if (this.#includeUsage) {
      text += sseData({ ...this.#base(), choices: [], usage: completionUsage(usage) });
    }
    return text + SSE_DONE;
  }

  #choiceChunk(delta: ChunkDelta, finish_reason: FinishReason | null): string {
    if (this.#finished) throw new Error("CompletionChunkWriter: the stream is already finished");
    // The role goes on the first chunk, whatever it carries, as OpenAI's first chunk has it.
    const withRole: ChunkDelta = this.#started ? delta : { role: "assistant", ...delta };
    this.#started = true;
    return sseData({
      ...this.#base(),
      choices: [{ index: 0, delta: withRole, logprobs: null, finish_reason }],
    });
  }

  #base(): Pick<ChatCompletionChunk, "id" | "object" | "created" | "model"> {
    return {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
    };
  }
}

export interface CompletionAnswer {
  /** The answer's text; "" is sent as `content: null` (a tool-call-only answer, as OpenAI does). */
  content: string;
  reasoning?: string;
  refusal?: string;
  tool_calls?: readonly CompletionToolCall[];
  finish_reason: FinishReason;
  usage: TokenUsage;
}

/** The whole answer as one `chat.completion` object (a client that asked for no stream). */
export function renderCompletion(
  identity: CompletionIdentity,
  answer: CompletionAnswer,
): ChatCompletion {
  const message: ChatCompletion["choices"][0]["message"] = {
    role: "assistant",
    content: answer.content === "" ? null : answer.content,
    refusal: answer.refusal ? answer.refusal : null,
  };
  if (answer.reasoning) message.reasoning_content = answer.reasoning;
  const calls = answer.tool_calls ?? [];
  // An empty `tool_calls` list is left out: some clients read its presence as "tools were called".
  if (calls.length > 0) {
    message.tool_calls = calls.map((call, order) => {
      const { index: _index, ...wire } = wireToolCall(call, order);
      return wire;
    });
  }
  return {
    id: identity.id ?? newCompletionId(),
    object: "chat.completion",
    created: identity.created ?? Math.floor(Date.now() / 1000),
    model: identity.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finish_reason }],
    usage: completionUsage(answer.usage),
  };
}

/** `order` is the call's place among those written, its index unless it names one. */
function wireToolCall(call: CompletionToolCall, order: number): WireCompletionToolCall {
  return {
    index: call.index ?? order,
    id: call.id,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  };
}

function sseData(chunk: ChatCompletionChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}
