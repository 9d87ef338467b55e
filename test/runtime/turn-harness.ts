import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import {
  type LabRunTurnOptions as RunTurnOptions,
  runTurn,
} from "../../src/composition/run-turn.js";
import type { MessageRecord } from "../../src/domain/records.js";
import type { ToolInvocationMode } from "../../src/domain/session-config.js";
import type { TurnEvent } from "../../src/domain/turn-events.js";
import type { UsageCallRecord } from "../../src/domain/usage.js";
import type {
  ChatModel,
  ChatModelPart,
  ChatModelRequest,
  StreamOptions,
} from "../../src/providers/chat-model.js";
import type { SessionStore } from "../../src/store/session-store.js";
import { SqliteSessionStore } from "../../src/store/sqlite/sqlite-session-store.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import type { Tool } from "../../src/tools/tool.js";
import { FakeOpenAIServer } from "../fake-openai-server.js";
import { temporaryDirectory } from "../paths.js";
import { requestMessages } from "./scripted-turns.js";
import { assertStrictHistory } from "./strict-history.js";

export const MODES = ["chat_agent_tools", "dual_agent"] as const satisfies ToolInvocationMode[];

/** A SqliteSessionStore in its own temporary folder. */
export interface TemporaryStore {
  store: SqliteSessionStore;
  path: string;
  /** Closes the store and removes the folder. */
  dispose(): void;
}

export function openTemporaryStore(): TemporaryStore {
  const directory = temporaryDirectory();
  const path = join(directory.path, "lab.db");
  const store = new SqliteSessionStore(path);
  return {
    store,
    path,
    dispose: () => {
      try {
        store.close();
      } finally {
        directory.remove();
      }
    },
  };
}

/** What `useServerLab` gives each test: its store, the store's file, and a fake endpoint. */
/**
 * Call inside a describe: each test gets a fresh store holding session "s" in `mode`; the
 * returned function gives the current test's store.
 */
export function useSessionStore(mode: ToolInvocationMode): () => TemporaryStore {
  let temporary: TemporaryStore | null = null;
  beforeEach(() => {
    temporary = openTemporaryStore();
    temporary.store.createSession({
      title: "s",
      session_id: "s",
      config: { tool_invocation_mode: mode },
    });
  });
  afterEach(() => temporary?.dispose());
  return () => {
    if (temporary === null) throw new Error("useSessionStore: no test is running");
    return temporary;
  };
}

/** The store, counting the calls of one of its methods (a read a test says was not made). */
export function countingCalls(
  store: SessionStore,
  method: keyof SessionStore,
): { store: SessionStore; count: () => number } {
  let count = 0;
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (property !== method) return value.bind(target);
      return (...args: unknown[]) => {
        count++;
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy, count: () => count };
}

export interface ServerLab {
  readonly store: SqliteSessionStore;
  readonly path: string;
  readonly server: FakeOpenAIServer;
}

/**
 * A temporary store and a fake OpenAI server for each test of the enclosing describe, closed after
 * it. With `strict`, every stored and sent history must be strict-valid first
 * (`assertStrictEverywhere`); a function names the recording models to check as well.
 */
export function useServerLab(
  options: { strict?: boolean | (() => readonly RecordingModel[]) } = {},
): ServerLab {
  let lab: TemporaryStore | undefined;
  let server: FakeOpenAIServer | undefined;
  beforeEach(async () => {
    lab = openTemporaryStore();
    server = await FakeOpenAIServer.start();
  });
  afterEach(async () => {
    const { strict } = options;
    try {
      if (strict && lab && server) {
        assertStrictEverywhere(lab.store, typeof strict === "function" ? strict() : [], server);
      }
    } finally {
      await server?.close();
      lab?.dispose();
      lab = undefined;
      server = undefined;
    }
  });
  const current = () => {
    if (lab === undefined || server === undefined) {
      throw new Error("useServerLab's store and server exist only while a test runs");
    }
    return { lab, server };
  };
  return {
    get store() {
      return current().lab.store;
    },
    get path() {
      return current().lab.path;
    },
    get server() {
      return current().server;
    },
  };
}

export type TurnEndEvent = Extract<TurnEvent, { type: "turn_end" }>;

export interface CollectedTurn {
  events: TurnEvent[];
  /** The closing event, when the turn started at all. */
  end: TurnEndEvent | undefined;
  /** What the iteration threw (a refusal before the turn started), or null. */
  error: unknown;
}

/**
 * Runs a turn to its end, keeping every event. `onEvent` sees each event as it arrives (to cancel
 * at a chosen moment); returning "stop" leaves the loop, which cancels the turn.
 */
export async function collectTurn(
  options: RunTurnOptions,
  onEvent?: (event: TurnEvent) => "stop" | undefined,
): Promise<CollectedTurn> {
  const events: TurnEvent[] = [];
  try {
    for await (const event of runTurn(options)) {
      events.push(event);
      if (onEvent?.(event) === "stop") break;
    }
    return { events, end: turnEnd(events), error: null };
  } catch (error) {
    return { events, end: turnEnd(events), error };
  }
}

function turnEnd(events: readonly TurnEvent[]): TurnEndEvent | undefined {
  return events.find((event): event is TurnEndEvent => event.type === "turn_end");
}

/** Runs a turn that must complete, and returns its end event. */
export async function completedTurn(options: RunTurnOptions): Promise<TurnEndEvent> {
  const { end, error } = await collectTurn(options);
  expect(error).toBeNull();
  expect(end?.status).toBe("completed");
  return end as TurnEndEvent;
}

export function eventsOfType<Type extends TurnEvent["type"]>(
  events: readonly TurnEvent[],
  type: Type,
): Extract<TurnEvent, { type: Type }>[] {
  return events.filter((event): event is Extract<TurnEvent, { type: Type }> => event.type === type);
}

/** Wraps a model and keeps a copy of every request it was sent. */
export class RecordingModel implements ChatModel {
  readonly requests: ChatModelRequest[] = [];
  constructor(private readonly inner: ChatModel) {}
  get provider(): string {
    return this.inner.provider;
  }
  get model(): string {
    return this.inner.model;
  }
  get simulated(): boolean {
    return this.inner.simulated;
  }
  get baseUrl(): string | undefined {
    return this.inner.baseUrl;
  }
  stream(request: ChatModelRequest, options?: StreamOptions): AsyncIterable<ChatModelPart> {
    this.requests.push(structuredClone(request));
    return this.inner.stream(request, options);
  }
}

export interface SlowToolOptions {
  /** Default "slow_lookup". */
  name?: string;
  /** Default: mock_search's schema (so a tool named mock_search is a drop-in the sim calls). */
  parameters?: Record<string, unknown>;
  timeout_ms?: number;
  /** How long `execute` takes unless its signal aborts first. Default 5,000. */
  delay_ms?: number;
  /** Called when `execute` starts. */
  onStart?: () => void;
}

/** A tool that takes `delay_ms` but stops at once on its signal, and says how it ended. */
export function slowTool(options: SlowToolOptions = {}): Tool & {
  readonly calls: { args: Record<string, unknown>; ended: "finished" | "aborted" | "running" }[];
} {
  const calls: { args: Record<string, unknown>; ended: "finished" | "aborted" | "running" }[] = [];
  const searchSchema = createBuiltinTools()[0]?.parameters ?? {};
  return {
    name: options.name ?? "slow_lookup",
    description: "Looks something up, slowly. Use it to test timeouts and cancellation.",
    parameters: options.parameters ?? searchSchema,
    ...(options.timeout_ms !== undefined ? { timeout_ms: options.timeout_ms } : {}),
    calls,
    execute(args, { signal }) {
      const call = { args, ended: "running" as "finished" | "aborted" | "running" };
      calls.push(call);
      const done = new Promise((resolve, reject) => {
        const stop = () => {
          clearTimeout(timer);
          call.ended = "aborted";
          reject(signal.reason);
        };
        const timer = setTimeout(() => {
          signal.removeEventListener("abort", stop);
          call.ended = "finished";
          resolve({ found: true });
        }, options.delay_ms ?? 5_000);
        if (signal.aborted) stop();
        else signal.addEventListener("abort", stop, { once: true });
      });
      // Called once the tool listens to its signal, so an abort from here is seen.
      options.onStart?.();
      return done;
    },
  };
}

export interface StoredTurnState {
  messages: MessageRecord[];
  calls: UsageCallRecord[];
  audit: { event: string; turn_index: number | null; round_index: number | null }[];
  auditEvents: string[];
  status: string | undefined;
}

/** What the store holds about one turn of a session. */
export function storedTurn(
  store: SqliteSessionStore,
  sessionId: string,
  turnIndex = 1,
): StoredTurnState {
  const audit = store
    .listAuditLogs(sessionId)
    .filter((entry) => entry.turn_index === turnIndex)
    .map(({ event, turn_index, round_index }) => ({ event, turn_index, round_index }));
  return {
    messages: store.listMessages(sessionId).filter((message) => message.turn_index === turnIndex),
    calls: store.usageSummary(sessionId).calls.filter((call) => call.turn_index === turnIndex),
    audit,
    auditEvents: audit.map((entry) => entry.event),
    status: store.listTurns(sessionId).find((turn) => turn.turn_index === turnIndex)?.status,
  };
}

/**
 * Every session's stored history, and every history a model was sent (recorded, or received by the
 * fake server), is one a strict endpoint accepts. Run after every scenario.
 */
export function assertStrictEverywhere(
  store: SqliteSessionStore,
  recorders: readonly RecordingModel[],
  server?: FakeOpenAIServer,
): void {
  for (const session of store.listSessions()) assertStrictHistory(store.listMessages(session.id));
  for (const recorder of recorders) {
    for (const request of recorder.requests) assertStrictHistory(request.messages);
  }
  server?.requests.forEach((_, index) => {
    assertStrictHistory(requestMessages(server, index));
  });
}

/** `expected` appears in `actual` in this order (other entries may come in between). */
export function expectInOrder(actual: readonly string[], expected: readonly string[]): void {
  let position = 0;
  for (const item of actual) {
    if (item === expected[position]) position++;
    if (position === expected.length) return;
  }
  expect.fail(
    `expected ${JSON.stringify(expected)} in this order within ${JSON.stringify(actual)}; ` +
      `missing from ${JSON.stringify(expected[position])}`,
  );
}

/** The message shapes compared in assertions: role, content and tool call links. */
export function messageShape(message: MessageRecord): {
  role: string;
  tool_call_id: string | null;
  tool_calls: string[];
} {
  return {
    role: message.role,
    tool_call_id: message.tool_call_id,
    tool_calls: message.tool_calls.map((call) => `${call.name}:${call.id}`),
  };
}

/** Usage rows as `metric_key agent call_kind [fallback]`, easy to compare as a list. */
export function callSummary(call: UsageCallRecord): string {
  return `${call.metric_key} ${call.agent} ${call.call_kind}${call.used_fallback ? " fallback" : ""}`;
}
