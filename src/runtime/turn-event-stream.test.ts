import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openTemporaryStore, type TemporaryStore } from "../../test/runtime/turn-harness.js";
import { runTurn } from "../composition/run-turn.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { TurnEventStream } from "./turn-event-stream.js";

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

  const start = (message = "search for sqlite wal mode", signal?: AbortSignal) =>
    runTurn({
      store: lab.store,
      session_id: "s",
      message,
      ...(signal ? { signal } : {}),
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

  it("answers next() calls made at once in order, as a generator does", async () => {
    const events = start();
    const [first, second] = await Promise.all([events.next(), events.next()]);
    expect(first.value).toMatchObject({ type: "turn_start" });
    expect(second.value).toMatchObject({ type: "round_start", round_index: 1 });
    await events.return();
  });

  it("left while a next() waits: that call is answered, and the turn is stored cancelled", async () => {
    const events = start();
    for (;;) if ((await events.next()).value?.type === "text_delta") break;
    const waiting = events.next();
    await events.return();
    const answered = await waiting;
    // Answered, not left hanging: done, or an event the cancelled turn still reported.
    expect(answered.done === true || typeof answered.value?.type === "string").toBe(true);
    expect(lab.store.listTurns("s")[0]?.status).toBe("cancelled");
    expect(await events.return()).toEqual({ value: undefined, done: true });
  });

  it("lets go of the caller's signal once the turn is over, read to the end or left", async () => {
    const controller = new AbortController();
    for await (const _ of start("search for sqlite wal mode", controller.signal)) {
      // read to the end
    }
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    const events = start("search for it again", controller.signal);
    await events.next();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    await events.return();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(lab.store.listTurns("s").map((turn) => turn.status)).toEqual(["completed", "cancelled"]);
  });
});

describe("TurnEventStream", () => {
  it("is done after return(), even when the turn's work failed with nothing reading", async () => {
    let fail: (error: Error) => void = () => {};
    const events = new TurnEventStream<string>((push) => {
      push("first");
      return {
        done: new Promise<void>((_, reject) => {
          fail = reject;
        }),
        stop: () => fail(new Error("stopped, then failed")),
      };
    });
    expect(await events.next()).toEqual({ value: "first", done: false });
    await events.return();
    expect(await events.next()).toEqual({ value: undefined, done: true });
  });

  it("does not stop a turn whose work is already over", async () => {
    const stops: Error[] = [];
    const events = new TurnEventStream<string>((push) => {
      push("only");
      return { done: Promise.resolve(), stop: (reason) => stops.push(reason) };
    });
    expect((await events.next()).value).toBe("only");
    await events.return();
    expect(stops).toEqual([]);
  });
});
