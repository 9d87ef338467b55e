import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTemporaryStore, type TemporaryStore } from "../../test/runtime/turn-harness.js";
import { runTurn } from "../composition/run-turn.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";

/**
 * runTurn's events behave as an async generator's would (turn-event-stream.ts): nothing runs
 * before the first `next()`, leaving early cancels the turn and waits until its end is stored,
 * and a refusal before the turn starts is the first `next()`'s rejection.
 */
describe("a turn's event stream", () => {
  let lab: TemporaryStore;
  beforeEach(() => {
    lab = openTemporaryStore();
  });
  afterEach(() => lab.dispose());

  const start = (message = "search for sqlite wal mode") =>
    runTurn({
      store: lab.store,
      session_id: "s",
      message,
      config: { tool_invocation_mode: "chat_agent_tools" },
      // Slow enough that the turn is still streaming when the consumer leaves.
      models: { chat: new SimChatModel({ options: { tokens_per_second: 200 } }) },
    });

  it("runs nothing until it is read", async () => {
    const events = start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lab.store.listSessions()).toEqual([]);
    expect((await events.next()).value).toMatchObject({ type: "turn_start" });
    await events.return();
  });

  it("left before it is read: done, and the turn never runs", async () => {
    const events = start();
    expect(await events.return()).toEqual({ value: undefined, done: true });
    expect(await events.next()).toEqual({ value: undefined, done: true });
    expect(lab.store.listSessions()).toEqual([]);
  });

  it("left mid-turn: the turn is cancelled and stored so before return() resolves", async () => {
    const events = start();
    for await (const event of events) if (event.type === "text_delta") break;
    const [turn] = lab.store.listTurns("s");
    expect(turn?.status).toBe("cancelled");
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it("thrown into: rejects with that error once the cancelled turn is stored", async () => {
    const events = start();
    await events.next();
    const error = new Error("the consumer's own failure");
    await expect(events.throw(error)).rejects.toBe(error);
    expect(lab.store.listTurns("s")[0]?.status).toBe("cancelled");
  });

  it("read to the end: every event, then done", async () => {
    const types: string[] = [];
    for await (const event of start()) types.push(event.type);
    expect(types[0]).toBe("turn_start");
    expect(types.at(-1)).toBe("turn_end");
    expect(lab.store.listTurns("s")[0]?.status).toBe("completed");
  });

  it("a refusal before the turn starts is the first next()'s rejection", async () => {
    const events = start("   ");
    await expect(events.next()).rejects.toThrow(/message/);
    expect(await events.next()).toEqual({ value: undefined, done: true });
    expect(lab.store.listSessions()).toEqual([]);
  });
});
