import { abortableSleep } from "../domain/abortable-sleep.js";
import { formatEventTag } from "../domain/event-protocol.js";
import { tokenUsage } from "../domain/usage.js";
import {
  type ChatModel,
  type ChatModelPart,
  type ChatModelRequest,
  hasBatches,
  type StreamOptions,
} from "../providers/chat-model.js";
import { PartStream } from "../providers/part-stream.js";

/**
 * The early-dispatch benchmark's chat agent: round one asks for one search, then keeps streaming
 * `trailing_ms` of text after the request; round two (tool results present) answers. It speaks
 * either style from the same script: a native tool call when offered `tools`, an `<event>` tag
 * otherwise. Like a real endpoint, a native call is only complete when the stream ends.
 */
export class ScriptedToolModel implements ChatModel {
  readonly provider = "bench";
  readonly model = "scripted";
  readonly simulated = true;

  constructor(private readonly trailing_ms: number) {}

  async *stream(
    request: ChatModelRequest,
    options: StreamOptions = {},
  ): AsyncGenerator<ChatModelPart> {
    const started = performance.now();
    yield { type: "response-start", attempt: 1, status: 200, request_id: null, at_ms: 0 };
    yield { type: "first-token", ttft_ms: performance.now() - started };
    if (hasToolResults(request)) {
      yield { type: "text-delta", text: "Here is what I found." };
      yield* closingParts("stop", performance.now() - started);
      return;
    }
    const args = '{"query":"early dispatch"}';
    const native = (request.tools ?? []).length > 0;
    yield { type: "text-delta", text: "Let me look that up. " };
    if (native) {
      yield {
        type: "tool-call-delta",
        index: 0,
        id: "call_1",
        name: "mock_search",
        arguments_delta: args,
      };
    } else {
      yield { type: "text-delta", text: formatEventTag("mock_search", args) };
    }
    const steps = 10;
    for (let step = 0; step < steps; step++) {
      await abortableSleep(this.trailing_ms / steps, options.signal);
      yield { type: "text-delta", text: "While that runs, some more thoughts. " };
    }
    if (native) {
      yield { type: "tool-call", index: 0, id: "call_1", name: "mock_search", raw_arguments: args };
    }
    yield* closingParts(native ? "tool_calls" : "stop", performance.now() - started);
  }
}

/** Whether round one is over: a native tool result or an `<event_result>` is in the history. */
export function hasToolResults(request: ChatModelRequest): boolean {
  return request.messages.some(
    (message) =>
      message.role === "tool" ||
      (message.role === "user" && message.content.includes("<event_result")),
  );
}

/** A scripted reply's last parts: fixed usage, then the finish. */
export function* closingParts(finish_reason: string, elapsed_ms: number): Generator<ChatModelPart> {
  yield {
    type: "usage",
    usage: tokenUsage({ prompt_tokens: 10, completion_tokens: 10 }),
    estimated: false,
    source: "endpoint",
    cost_usd: null,
    raw: null,
  };
  yield {
    type: "finish",
    finish_reason,
    ttft_ms: 0,
    elapsed_ms,
    attempts: 1,
    response_model: null,
    response_id: null,
    system_fingerprint: null,
  };
}

/** One call through a TimedModel: from its first part asked for to its end, and its time inside. */
export interface CallSpan {
  start: number;
  end: number;
  model_ms: number;
}

/** Wraps a model and adds up the time spent inside it, so the lab's own cost can be separated out. */
export class TimedModel implements ChatModel {
  spent_ms = 0;
  /**
   * The calls since the last `takeSpans`; null until a caller first takes them, so a bench that
   * never reads spans (tools, cost per round) does not keep one per call for its whole run.
   */
  #spans: CallSpan[] | null = null;
  get provider() {
    return this.inner.provider;
  }
  get model() {
    return this.inner.model;
  }
  get simulated() {
    return this.inner.simulated;
  }

  constructor(
    private readonly inner: ChatModel,
    /** The clock (a test's own, to count exactly). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The calls made since the last take, in order (a bench reads where a turn's time went); the
   * first take starts the record and returns nothing.
   */
  takeSpans(): CallSpan[] {
    const spans = this.#spans ?? [];
    this.#spans = [];
    return spans;
  }

  /**
   * The wrapped model's stream, timed. A stream read in batches (the adapters', the sim's) stays
   * one: its consumer reads it as it would the model's own, a batch at a time.
   */
  stream(request: ChatModelRequest, options?: StreamOptions): AsyncIterable<ChatModelPart> {
    const inner = this.inner.stream(request, options);
    return hasBatches(inner) ? new PartStream(this.#timed(inner.batches())) : this.#timed(inner);
  }

  async *#timed<Item>(source: AsyncIterable<Item>): AsyncGenerator<Item, void, undefined> {
    const span: CallSpan = { start: this.now(), end: 0, model_ms: 0 };
    this.#spans?.push(span);
    const iterator = source[Symbol.asyncIterator]();
    let done = false;
    try {
      for (;;) {
        // Only the synchronous slice of `next()` is the model's: the models timed here (the sim
        // at zero latency, OneCallModel) do all their work in it. A model that sleeps between
        // parts would have its sleep charged to the caller. Awaiting its promise runs
        // every job the caller queued before it, and a lab that hands each part on through a
        // channel has several queued: timed to the await's end, 23 µs of the lab's own work a
        // turn were counted as the sim's and subtracted (5 December).
        const start = this.now();
        const pending = iterator.next();
        this.#spend(span, start);
        const next = await pending;
        if (next.done) {
          done = true;
          return;
        }
        yield next.value;
      }
    } finally {
      // Left early (ChatModel.stream): the wrapped model's call ends too, on the model's time.
      if (!done) {
        const start = this.now();
        const ended = iterator.return?.();
        this.#spend(span, start);
        await ended;
      }
    }
  }

  /**
   * Time inside the model since `start`, counted as each part arrives: a stream its consumer
   * abandons without `return()` keeps what it spent, and its span ends at its last part.
   */
  #spend(span: CallSpan, start: number): void {
    const now = this.now();
    span.model_ms += now - start;
    span.end = now;
    this.spent_ms += now - start;
  }
}
