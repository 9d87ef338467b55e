import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A scripted OpenAI-compatible endpoint for tests, on 127.0.0.1 only. Each request takes the next
 * scripted response from a queue, so a test says exactly what the endpoint does, fault by fault:
 * the status and headers, the body as a sequence of writes with pauses, and how it ends (normally,
 * cut mid-stream, stalled forever), or a connection reset before any header. Every request is
 * recorded.
 *
 *   const server = await FakeOpenAIServer.start();
 *   server.enqueue({ status: 429, headers: { "retry-after-ms": "10" } }, reply(completionStream({ text: ["Hi"] })));
 *   ... new OpenAIChatModel({ model: "m", base_url: server.baseUrl }) ...
 *   await server.close();
 */

/**
 * A chunk of body to write, or a pause between writes: for a time, or until the test says (a
 * test whose next request must find this one still answering, however slowly it gets there).
 */
export type BodyStep = string | Uint8Array | { waitMs: number } | { until: Promise<unknown> };

export interface ScriptedReply {
  kind?: "reply";
  /** Default 200. */
  status?: number;
  /** Added to the defaults: an SSE content type for 2xx, JSON otherwise. */
  headers?: Record<string, string>;
  body?: readonly BodyStep[];
  /** Wait before sending the status line and headers. */
  headerDelayMs?: number;
  /**
   * After the body: "end" finishes the response properly; "destroy" closes the socket with the
   * chunked body unfinished (a connection lost mid-stream); "stall" keeps it open, silent, until
   * the client gives up or the server closes.
   */
  ending?: "end" | "destroy" | "stall";
  /**
   * While stalled, write this every `everyMs` (an SSE comment such as `: ping\n\n`, or an empty
   * chunk): a stream that looks alive and never progresses.
   */
  keepAlive?: { text: string; everyMs: number };
}

export type ScriptedResponse =
  | ScriptedReply
  /** Reads the request, then resets the TCP connection without sending a byte. */
  | { kind: "reset" }
  /** Reads the request and never answers: no headers, no body. */
  | { kind: "hang" };

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. "/v1/chat/completions". */
  path: string;
  /** Lower-cased names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  rawBody: string;
  /** Settles when the response is over: finished, or its connection closed by either side. */
  closed: Promise<void>;
}

export class FakeOpenAIServer {
  readonly requests: RecordedRequest[] = [];
  readonly #queue: ScriptedResponse[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #server: Server;
  #port = 0;
  #listening = true;

  private constructor() {
    this.#server = createServer((request, response) => {
      let rawBody = "";
      request.setEncoding("utf8");
      request.on("data", (text: string) => {
        rawBody += text;
      });
      request.on("end", () => {
        const closed = new Promise<void>((resolve) => response.once("close", resolve));
        this.requests.push({
          method: request.method ?? "",
          path: request.url ?? "",
          headers: request.headers,
          body: parseJson(rawBody),
          rawBody,
          closed,
        });
        const script = this.#queue.shift() ?? NO_SCRIPT_LEFT;
        this.#play(script, response).catch(() => response.destroy());
      });
    });
    this.#server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
  }

  static async start(): Promise<FakeOpenAIServer> {
    const fake = new FakeOpenAIServer();
    await new Promise<void>((resolve, reject) => {
      fake.#server.once("error", reject);
      // Loopback only: tests never open a port anyone else can reach.
      fake.#server.listen(0, "127.0.0.1", () => resolve());
    });
    fake.#port = (fake.#server.address() as AddressInfo).port;
    return fake;
  }

  /** The base URL an OpenAI client is configured with (`.../v1`, no trailing slash). */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.#port}/v1`;
  }

  /** Scripted responses not yet used. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Adds responses to the end of the queue; each request takes the next one. */
  enqueue(...responses: ScriptedResponse[]): this {
    this.#queue.push(...responses);
    return this;
  }

  /** Stops listening and cuts every connection, stalled ones included. */
  async close(): Promise<void> {
    this.#listening = false;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #play(script: ScriptedResponse, response: ServerResponse): Promise<void> {
    if (script.kind === "hang") return;
    if (script.kind === "reset") {
      response.socket?.resetAndDestroy();
      return;
    }
    const status = script.status ?? 200;
    if (script.headerDelayMs) await this.#wait(script.headerDelayMs);
    if (response.destroyed) return;
    const success = status >= 200 && status < 300;
    response.writeHead(status, {
      "content-type": success ? "text/event-stream" : "application/json",
      "cache-control": "no-cache",
      ...script.headers,
    });
    // Headers go out now, not with the first body write: that is what a streaming server does.
    response.flushHeaders();
    for (const step of script.body ?? []) {
      if (response.destroyed) return;
      if (typeof step === "object" && "waitMs" in step) {
        await this.#wait(step.waitMs);
        continue;
      }
      if (typeof step === "object" && "until" in step) {
        await step.until;
        continue;
      }
      // Waiting for each write to reach the socket makes "destroy" cut exactly after the body.
      await new Promise<void>((resolve) => response.write(step, () => resolve()));
    }
    if (response.destroyed) return;
    const ending = script.ending ?? "end";
    if (ending === "end") response.end();
    else if (ending === "destroy") response.socket?.destroy();
    else if (script.keepAlive) {
      const { text, everyMs } = script.keepAlive;
      while (!response.destroyed) {
        await this.#wait(everyMs);
        if (response.destroyed || !this.#listening) return;
        response.write(text);
      }
    }
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve();
      }, ms);
      this.#timers.add(timer);
    });
  }
}

/** What an unscripted request gets: a loud, non-retryable failure rather than a hang. */
const NO_SCRIPT_LEFT: ScriptedReply = {
  status: 500,
  headers: { "x-should-retry": "false" },
  body: [JSON.stringify({ error: { message: "fake-openai-server: no scripted response left" } })],
};

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// ---- Body builders -------------------------------------------------------------------------

/** One SSE event carrying `data` as JSON. */
export function sseEvent(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
}

export const SSE_DONE = "data: [DONE]\n\n";

/** An SSE comment line, as proxies and some servers send to keep a connection open. */
export const SSE_PING = ": ping\n\n";

/** Every way an endpoint may end its last event, including not ending it, by a readable name. */
export const FINAL_TERMINATORS: Readonly<Record<string, string>> = {
  "\\n\\n": "\n\n",
  "\\r\\n\\r\\n": "\r\n\r\n",
  "\\r\\r": "\r\r",
  "\\n": "\n",
  "\\r\\n": "\r\n",
  "\\r": "\r",
  none: "",
};

/**
 * A whole answer whose last event (the finish reason) ends with `terminator` instead of a blank
 * line, and no `[DONE]`: raw bytes, as a server with its own SSE writer may send them.
 */
export function unterminatedFinish(text: string, terminator: string): string[] {
  return [
    sseEvent(completionChunk({ role: "assistant", content: "" })),
    sseEvent(completionChunk({ content: text })),
    `data: ${JSON.stringify(completionChunk({}, "stop"))}${terminator}`,
  ];
}

export interface ChunkDelta {
  role?: "assistant";
  content?: string | null;
  tool_calls?: {
    index: number;
    id?: string;
    type?: "function";
    function?: { name?: string; arguments?: string };
  }[];
}

/** A `chat.completion.chunk` with one choice. */
export function completionChunk(delta: ChunkDelta, finishReason: string | null = null): object {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "fake-model",
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** The final chunk `stream_options.include_usage` asks for: no choices, only usage. */
export function usageChunk(usage: FakeUsage): object {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "fake-model",
    choices: [],
    usage: {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
      prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
    },
  };
}

export interface StreamScript {
  /** Text deltas, in order. */
  text?: readonly string[];
  /** Tool-call deltas, in order (interleave indexes freely). */
  toolCalls?: readonly NonNullable<ChunkDelta["tool_calls"]>[number][];
  /** Default "stop", or "tool_calls" when there are tool calls; null sends none. */
  finishReason?: string | null;
  /** null sends no usage chunk. */
  usage?: FakeUsage | null;
  /** Default true. */
  done?: boolean;
}

/**
 * The SSE events of a whole streamed completion as OpenAI sends it: a role chunk, the deltas, a
 * finish chunk, a usage chunk, `[DONE]`. One string per event.
 */
export function completionStream(script: StreamScript): string[] {
  const toolCalls = script.toolCalls ?? [];
  const finishReason =
    script.finishReason === undefined
      ? toolCalls.length > 0
        ? "tool_calls"
        : "stop"
      : script.finishReason;
  const events = [sseEvent(completionChunk({ role: "assistant", content: "" }))];
  for (const text of script.text ?? []) events.push(sseEvent(completionChunk({ content: text })));
  for (const call of toolCalls) events.push(sseEvent(completionChunk({ tool_calls: [call] })));
  if (finishReason !== null) events.push(sseEvent(completionChunk({}, finishReason)));
  const usage =
    script.usage === undefined ? { prompt_tokens: 10, completion_tokens: 5 } : script.usage;
  if (usage !== null) events.push(sseEvent(usageChunk(usage)));
  if (script.done ?? true) events.push(SSE_DONE);
  return events;
}

/** A 200 streaming reply of the given body steps. */
export function streamReply(
  body: readonly BodyStep[],
  extra: Omit<ScriptedReply, "body"> = {},
): ScriptedReply {
  return { ...extra, body };
}

/** An error reply with OpenAI's `{error:{message,type}}` body. */
export function errorReply(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): ScriptedReply {
  return {
    status,
    headers,
    body: [JSON.stringify({ error: { message, type: "fake_error", code: null } })],
  };
}

// ---- Consuming ---------------------------------------------------------------------------------

/** Drains a stream, keeping the parts that came before a failure and the failure (or null). */
export async function collectStream<Part>(
  stream: AsyncIterable<Part>,
): Promise<{ parts: Part[]; error: unknown }> {
  const parts: Part[] = [];
  try {
    for await (const part of stream) parts.push(part);
    return { parts, error: null };
  } catch (error) {
    return { parts, error };
  }
}
