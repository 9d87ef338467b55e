import { request as httpRequest } from "node:http";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, beforeEach } from "vitest";
import { FakeOpenAIServer } from "../../test/fake-openai-server.js";
import { temporaryDirectory } from "../../test/paths.js";
import { LabConfigFile } from "../domain/tool-sources.js";
import type { TurnEvent } from "../domain/turn-events.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { type RunningServer, type StartServerOptions, startServer } from "./start-server.js";

/**
 * A server on a free loopback port over a fresh SQLite file, for tests that speak real HTTP. Like
 * `serve`, it makes a token unless given one (or `token: false`); `api` presents it.
 */
export interface TestServer {
  server: RunningServer;
  store: SqliteSessionStore;
  url: string;
  /** `{ authorization: "Bearer …" }`, or `{}` for a server without a token: for raw requests. */
  auth: Record<string, string>;
  /** Everything the server logged. */
  logs: string[];
  /**
   * fetch against the server, with the token unless `headers` has an `authorization` of its own;
   * a JSON `body` object is sent with its content type.
   */
  api(path: string, init?: ApiInit): Promise<Response>;
  close(): Promise<void>;
}

export interface ApiInit extends RequestInit {
  /** Sent as the JSON body, with `content-type: application/json` unless one is given. */
  json?: unknown;
}

export async function startTestServer(
  options: Partial<Omit<StartServerOptions, "store">> = {},
): Promise<TestServer> {
  const directory = temporaryDirectory();
  const store = new SqliteSessionStore(join(directory.path, "lab.sqlite3"));
  const logs: string[] = [];
  let server: RunningServer;
  try {
    server = await startServer({
      store,
      port: 0,
      webRoot: join(directory.path, "no-web-build"),
      log: (line) => logs.push(line),
      ...options,
    });
  } catch (error) {
    store.close();
    directory.remove();
    throw error;
  }
  const auth: Record<string, string> =
    server.token === null ? {} : { authorization: `Bearer ${server.token}` };
  return {
    server,
    store,
    url: server.url,
    auth,
    logs,
    api(path, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (!headers.has("authorization") && auth.authorization) {
        headers.set("authorization", auth.authorization);
      }
      if (json !== undefined && !headers.has("content-type")) {
        headers.set("content-type", "application/json");
      }
      const request: RequestInit = { ...rest, headers };
      if (json !== undefined) request.body = JSON.stringify(json);
      return fetch(new URL(path, server.url), request);
    },
    async close() {
      await server.close();
      store.close();
      directory.remove();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request through node:http, which (unlike fetch) sends any Host header and lets a body be
 * chunked without a Content-Length.
 */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    body?: string | Buffer | Buffer[];
  },
): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: target.hostname.replace(/^\[|\]$/g, ""),
        port: target.port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers ?? {},
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    const parts = Array.isArray(options.body)
      ? options.body
      : options.body === undefined
        ? []
        : [options.body];
    for (const part of parts) request.write(part);
    request.end();
  });
}

export interface SseMessage {
  event: string;
  data: string;
}

/** Parses a complete text/event-stream body (comments skipped). */
export function parseSse(text: string): SseMessage[] {
  const messages: SseMessage[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length > 0) messages.push({ event, data: data.join("\n") });
  }
  return messages;
}

/** The turn events of an SSE body, checking that each event's name is its type. */
export function turnEventsOf(text: string): TurnEvent[] {
  return parseSse(text).map((message) => {
    const event = JSON.parse(message.data) as TurnEvent;
    if (event.type !== message.event) {
      throw new Error(`SSE event named ${message.event} carries a ${event.type} event`);
    }
    return event;
  });
}

/** Polls `check` until it returns true (or fails after `timeoutMs`). */
export async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A config whose sim model streams slowly enough to interrupt a turn in the middle. */
/** A client tool of the gateway tests: an order looked up by its number. */
export const LOOKUP_ORDER: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "lookup_order",
    description: "Finds an order by its number.",
    parameters: {
      type: "object",
      properties: { order: { type: "string" } },
      required: ["order"],
    },
  },
};

export const SLOW_SIM_CONFIG = {
  tool_invocation_mode: "chat_agent_tools",
  chat_agent: { model: "sim", options: { tokens_per_second: 20 } },
} as const;

/**
 * `runTurnDefaults` for a lab whose config names one upstream, `fake`, at `baseUrl` (a test's
 * FakeOpenAIServer), with its key in the environment and no retries of the lab's own.
 */
export function fakeUpstreamDefaults(
  baseUrl: string,
): NonNullable<StartServerOptions["runTurnDefaults"]> {
  return {
    labConfig: LabConfigFile.parse({
      upstreams: {
        fake: {
          base_url: baseUrl,
          model: "fake-model",
          api_key_env: "FAKE_UPSTREAM_KEY",
          options: { max_retries: 0 },
        },
      },
    }),
    env: { ...process.env, FAKE_UPSTREAM_KEY: "sk-fake-0123456789abcdef" },
  };
}

/** A lab server whose agent-lab.yaml names one upstream, `fake`, a FakeOpenAIServer. */
export interface FakeUpstreamLab {
  readonly upstream: FakeOpenAIServer;
  readonly server: TestServer;
  /** The openai client at the gateway, no retries; `mode` sends X-Agent-Lab-Mode. */
  client(mode?: "dual_agent"): OpenAI;
  /** Every stored session, whole, newest first. */
  sessions(): ReturnType<SqliteSessionStore["getSession"]>[];
}

/** Starts both before each test of the file and closes them after it. */
export function fakeUpstreamLabPerTest(): FakeUpstreamLab {
  let upstream: FakeOpenAIServer | undefined;
  let server: TestServer | undefined;
  beforeEach(async () => {
    upstream = await FakeOpenAIServer.start();
    server = await startTestServer({ runTurnDefaults: fakeUpstreamDefaults(upstream.baseUrl) });
  });
  afterEach(async () => {
    await server?.close();
    await upstream?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("fakeUpstreamLabPerTest: read outside a test");
    return value;
  };
  return {
    get upstream() {
      return started(upstream);
    },
    get server() {
      return started(server);
    },
    client(mode) {
      const lab = started(server);
      return new OpenAI({
        baseURL: new URL("/v1", lab.url).href,
        apiKey: lab.server.token as string,
        maxRetries: 0,
        ...(mode === undefined ? {} : { defaultHeaders: { "X-Agent-Lab-Mode": mode } }),
      });
    },
    sessions() {
      const { store } = started(server);
      return store.listSessions().map((item) => store.getSession(item.id));
    },
  };
}
