import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCrashWorker } from "../../test/runtime/crash-worker.js";
import { assertStrictHistory } from "../../test/runtime/strict-history.js";
import {
  assertStrictEverywhere,
  collectTurn,
  completedTurn,
  MODES,
  openTemporaryStore,
  RecordingModel,
  storedTurn,
  type TemporaryStore,
} from "../../test/runtime/turn-harness.js";
import { InvalidInputError, TurnInProgressError } from "../domain/errors.js";
import type { LabSessionConfigInput } from "../domain/session-config.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import type { SimOptionsInput } from "../providers/sim/sim-options.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

/**
 * What one turn must not do to others: a process killed mid-turn leaves a session that goes on,
 * a second turn on a busy session is refused without a trace, and a config carrying a secret is
 * refused before anything is written.
 */

const SEARCH = "search for sqlite wal mode";

describe.each(MODES)("runTurn isolation, %s", (mode) => {
  let lab: TemporaryStore;
  let recorders: RecordingModel[];

  beforeEach(() => {
    lab = openTemporaryStore();
    recorders = [];
  });

  afterEach(() => {
    try {
      assertStrictEverywhere(lab.store, recorders);
    } finally {
      lab.dispose();
    }
  });

  const sim = (options: SimOptionsInput = {}): RecordingModel => {
    const recorder = new RecordingModel(new SimChatModel({ options }));
    recorders.push(recorder);
    return recorder;
  };

  it("10. a process killed mid-turn (kill -9): the file opens, the turn is interrupted, the next one runs", async () => {
    const worker = startCrashWorker(lab.path, "crash", mode);
    try {
      await worker.midTurn;
      // While the process lives, its turn holds the session, across processes too.
      const refused = await collectTurn({
        store: lab.store,
        session_id: "crash",
        message: "hello",
        models: { chat: sim() },
      });
      expect(refused.error).toBeInstanceOf(TurnInProgressError);
      expect(refused.error).toMatchObject({
        code: "turn_in_progress",
        turnIndex: 1,
        runner: `${worker.pid}@${hostname()}`,
      });
      expect(refused.events).toEqual([]);
    } finally {
      expect(await worker.killHard()).toBe("SIGKILL");
    }

    const reopened = new SqliteSessionStore(lab.path);
    try {
      const before = storedTurn(reopened, "crash");
      expect(before.status).toBe("running");
      expect(reopened.listTurns("crash")[0]?.runner).toBe(`${worker.pid}@${hostname()}`);
      expect(before.messages.map((message) => message.role)).toEqual(["user"]);
      // A round is written whole at its end (runtime/turn-records.ts): killed mid-round, only
      // what was written at once is there, and the history is still one an endpoint accepts.
      expect(before.auditEvents).toEqual(["turn_start"]);
      expect(before.calls).toEqual([]);

      const chat = sim();
      const end = await completedTurn({
        store: reopened,
        session_id: "crash",
        message: SEARCH,
        models: { chat },
      });
      expect(end.turn_index).toBe(2);
      expect(reopened.listTurns("crash").map((turn) => [turn.turn_index, turn.status])).toEqual([
        [1, "interrupted"],
        [2, "completed"],
      ]);
      const interrupted = reopened
        .listAuditLogs("crash")
        .filter((entry) => entry.event === "turn_interrupted");
      expect(interrupted).toMatchObject([
        { turn_index: 1, details: { runner: `${worker.pid}@${hostname()}` } },
      ]);
      // The same message sent again after the interrupted turn reaches the model once (both are
      // in the record), and every history it was sent is strict-valid.
      const first = chat.requests[0]?.messages ?? [];
      expect(first.filter((message) => message.role === "user")).toHaveLength(1);
      const users = reopened.listMessages("crash").filter((message) => message.role === "user");
      expect(users.map((message) => message.turn_index)).toEqual([1, 2]);
      for (const request of chat.requests) assertStrictHistory(request.messages);
      assertStrictHistory(reopened.listMessages("crash"));
      expect(storedTurn(reopened, "crash", 2).messages.map((message) => message.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
    } finally {
      reopened.close();
    }
  });

  it("11. a second turn on a busy session is refused at once and changes nothing", async () => {
    await completedTurn({
      store: lab.store,
      session_id: "busy",
      message: "hello",
      config: { tool_invocation_mode: mode },
      models: { chat: sim() },
    });
    const settled: string[] = [];
    const first = collectTurn({
      store: lab.store,
      session_id: "busy",
      message: SEARCH,
      models: { chat: sim({ first_token_ms: 100 }) },
    }).finally(() => settled.push("first"));
    const second = collectTurn({
      store: lab.store,
      session_id: "busy",
      message: "hello again",
      config: { tool_invocation_mode: mode },
      models: { chat: sim() },
    }).finally(() => settled.push("second"));
    const [a, b] = await Promise.all([first, second]);

    expect(b.error).toBeInstanceOf(TurnInProgressError);
    expect(b.error).toMatchObject({ code: "turn_in_progress" });
    expect(b.events).toEqual([]);
    expect(settled).toEqual(["second", "first"]);
    expect(a.end?.status).toBe("completed");
    // Nothing of the refused turn was stored.
    expect(lab.store.listTurns("busy").map((turn) => turn.user_message)).toEqual(["hello", SEARCH]);
    const stored = JSON.stringify([
      lab.store.listMessages("busy"),
      lab.store.listAuditLogs("busy"),
      lab.store.getSession("busy"),
    ]);
    expect(stored).not.toContain("hello again");
    expect(
      lab.store.listAuditLogs("busy").filter((entry) => entry.event === "turn_start"),
    ).toHaveLength(2);
  });

  it("11. two turns starting a new session with the same id at once: one runs, one is refused", async () => {
    const options = {
      store: lab.store,
      session_id: "fresh",
      config: { tool_invocation_mode: mode },
    } as const;
    const [a, b] = await Promise.all([
      collectTurn({ ...options, message: "hello", models: { chat: sim({ first_token_ms: 50 }) } }),
      collectTurn({ ...options, message: "hello again", models: { chat: sim() } }),
    ]);
    expect(a.end?.status).toBe("completed");
    expect(b.error).toMatchObject({ code: "turn_in_progress" });
    expect(lab.store.listTurns("fresh").map((turn) => turn.user_message)).toEqual(["hello"]);
  });

  it("11. two sessions run their turns at the same time", async () => {
    const run = (session_id: string) =>
      completedTurn({
        store: lab.store,
        session_id,
        message: SEARCH,
        config: { tool_invocation_mode: mode },
        models: { chat: sim({ first_token_ms: 60 }) },
      });
    const [left, right] = await Promise.all([run("left"), run("right")]);
    expect([left.session_id, right.session_id]).toEqual(["left", "right"]);
    // They overlapped: each started before the other ended.
    const span = (session: string) => {
      const audit = lab.store.listAuditLogs(session);
      return {
        start: audit.find((entry) => entry.event === "turn_start")?.id ?? Number.NaN,
        end: audit.find((entry) => entry.event === "turn_end")?.id ?? Number.NaN,
      };
    };
    const [l, r] = [span("left"), span("right")];
    expect(l.start).toBeLessThan(r.end);
    expect(r.start).toBeLessThan(l.end);
    for (const session of ["left", "right"]) {
      expect(storedTurn(lab.store, session).messages.map((message) => message.role)).toEqual([
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
    }
  });

  it.each([
    ["an unknown tool", { tools: ["mock_search", "no_such_tool"] }, /unknown tool no_such_tool/],
    ["a bad model string", { chat_agent: { model: "gpt-4o" } }, /model: "gpt-4o" is not a model/],
    [
      "bad sim options",
      { event_agent: { options: { tokens_per_second: -1 } } },
      /tokens_per_second/,
    ],
  ])("12. a config naming %s is refused before a session is created", async (_, extra, message) => {
    const { error, events } = await collectTurn({
      store: lab.store,
      session_id: "broken",
      message: "hello",
      config: { tool_invocation_mode: mode, ...extra } as LabSessionConfigInput,
    });
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(message);
    expect(events).toEqual([]);
    // Nothing stored: the same id can still start a working session.
    expect(lab.store.listSessions()).toEqual([]);
    const end = await completedTurn({
      store: lab.store,
      session_id: "broken",
      message: "hello",
      config: { tool_invocation_mode: mode },
    });
    expect(end.turn_index).toBe(1);
  });

  it("12. bad input is refused with an error naming it, and nothing is stored", async () => {
    const empty = await collectTurn({ store: lab.store, session_id: "x", message: "  " });
    expect(empty.error).toBeInstanceOf(InvalidInputError);
    expect((empty.error as Error).message).toBe("message: the message is empty");
    const notText = await collectTurn({
      store: lab.store,
      session_id: "x",
      message: 42 as unknown as string,
    });
    expect(notText.error).toBeInstanceOf(InvalidInputError);
    expect((notText.error as Error).message).toMatch(/^message: .*expected string/);
    const other = mode === "dual_agent" ? "chat_agent_tools" : "dual_agent";
    await completedTurn({
      store: lab.store,
      session_id: "locked",
      message: "hello",
      config: { tool_invocation_mode: mode },
    });
    const mismatch = await collectTurn({
      store: lab.store,
      session_id: "locked",
      message: "hello again",
      config: { tool_invocation_mode: other },
    });
    expect(mismatch.error).toMatchObject({ code: "session_mode_mismatch" });
    expect(lab.store.listSessions().map((session) => session.id)).toEqual(["locked"]);
    expect(lab.store.listTurns("locked")).toHaveLength(1);
    expect(lab.store.getSession("locked")?.tool_invocation_mode).toBe(mode);
  });

  it("12. the message is stored and answered trimmed, as the schema reads it", async () => {
    await completedTurn({
      store: lab.store,
      session_id: "trimmed",
      message: " \n search for trimmed input \t ",
      config: { tool_invocation_mode: mode },
    });
    expect(lab.store.listTurns("trimmed")[0]?.user_message).toBe("search for trimmed input");
    expect(lab.store.listMessages("trimmed")[0]).toMatchObject({
      role: "user",
      content: "search for trimmed input",
    });
  });

  const SECRET = "sk-live-DO-NOT-STORE-4242";
  it.each([
    ["chat_agent.api_key", { chat_agent: { model: "sim", api_key: SECRET } }],
    [
      "event_agent.options.headers.Authorization",
      {
        event_agent: { model: "sim", options: { headers: { Authorization: `Bearer ${SECRET}` } } },
      },
    ],
  ])(
    "12. a config holding a secret (%s) is refused before anything is stored",
    async (path, extra) => {
      const config = { tool_invocation_mode: mode, ...extra } as LabSessionConfigInput;
      const { error, events } = await collectTurn({
        store: lab.store,
        session_id: "secret",
        message: "hello",
        config,
        models: { chat: sim() },
      });
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).not.toContain(SECRET);
      expect(events).toEqual([]);
      expect(lab.store.listSessions()).toEqual([]);
      expect(lab.store.getSession("secret")).toBeNull();
      for (const file of [lab.path, `${lab.path}-wal`]) {
        if (existsSync(file)) expect(readFileSync(file).includes(SECRET)).toBe(false);
      }
    },
  );
});
