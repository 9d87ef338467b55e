import { expect, it } from "vitest";
import {
  InvalidInputError,
  SessionChangedError,
  SessionNotFoundError,
  TurnInProgressError,
} from "../domain/errors.js";
import type { SessionStore } from "./session-store.js";
import type { ClaimTurnOptions } from "./store-inputs.js";

/**
 * claimTurn, for any SessionStore. Called inside `describeSessionStoreContract`, so every backend
 * runs it; the cross-process race itself is tested per backend (src/store/sqlite/claim-race.test.ts).
 */
export function turnClaimContract(getStore: () => SessionStore): void {
  const alive = () => true;
  const dead = () => false;

  it("claimTurn stores the next turn, running, with its user message as its first message", async () => {
    const store = getStore();
    await store.createSession({ title: "claim", config: {}, session_id: "claim" });
    expect(await store.claimTurn("claim", { user_message: "one", runner: "1@h" })).toStrictEqual({
      turn_index: 1,
      interrupted: [],
    });
    await store.appendMessage("claim", {
      turn_index: 1,
      message: { role: "assistant", content: "answer one" },
    });
    await store.completeTurn("claim", { turn_index: 1, wall_time_ms: 3 });
    const second = await store.claimTurn("claim", { user_message: "two", runner: "2@h" });
    expect(second.turn_index).toBe(2);

    const turns = await store.listTurns("claim");
    expect(
      turns.map(({ turn_index, status, runner, user_message }) => ({
        turn_index,
        status,
        runner,
        user_message,
      })),
    ).toStrictEqual([
      { turn_index: 1, status: "completed", runner: "1@h", user_message: "one" },
      { turn_index: 2, status: "running", runner: "2@h", user_message: "two" },
    ]);
    const messages = await store.listMessages("claim");
    expect(
      messages.map(({ turn_index, role, content, tool_calls }) => ({
        turn_index,
        role,
        content,
        tool_calls,
      })),
    ).toStrictEqual([
      { turn_index: 1, role: "user", content: "one", tool_calls: [] },
      { turn_index: 1, role: "assistant", content: "answer one", tool_calls: [] },
      { turn_index: 2, role: "user", content: "two", tool_calls: [] },
    ]);
    expect((await store.listSessions())[0]?.turn_count).toBe(2);
  });

  it("claimTurn refuses while a live runner's turn runs, changing nothing", async () => {
    const store = getStore();
    await store.createSession({ title: "busy", config: {}, session_id: "busy" });
    await store.claimTurn("busy", { user_message: "first", runner: "7@h" });
    const before = {
      turns: await store.listTurns("busy"),
      messages: await store.listMessages("busy"),
      audit: await store.listAuditLogs("busy"),
    };
    for (const options of [
      { user_message: "second", runner: "8@h", is_runner_alive: alive },
      // Without a liveness check every runner counts as alive.
      { user_message: "second", runner: "8@h" },
    ]) {
      const refusal = await Promise.resolve()
        .then(() => store.claimTurn("busy", options))
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(TurnInProgressError);
      expect(refusal).toMatchObject({ code: "turn_in_progress", turnIndex: 1, runner: "7@h" });
      expect((refusal as Error).message).toContain(
        "already has a turn running (turn 1, run by 7@h)",
      );
    }
    expect({
      turns: await store.listTurns("busy"),
      messages: await store.listMessages("busy"),
      audit: await store.listAuditLogs("busy"),
    }).toStrictEqual(before);
  });

  it("claimTurn marks a dead runner's running turn interrupted, audited, and takes the next index", async () => {
    const store = getStore();
    await store.createSession({ title: "dead", config: {}, session_id: "dead" });
    await store.claimTurn("dead", { user_message: "first", runner: "9@h" });
    const asked: (string | null)[] = [];
    const claimed = await store.claimTurn("dead", {
      user_message: "second",
      runner: "10@h",
      is_runner_alive: (runner) => {
        asked.push(runner);
        return dead();
      },
    });
    expect(asked).toStrictEqual(["9@h"]);
    expect(claimed).toStrictEqual({ turn_index: 2, interrupted: [1] });
    expect((await store.listTurns("dead")).map((turn) => [turn.turn_index, turn.status])).toEqual([
      [1, "interrupted"],
      [2, "running"],
    ]);
    expect(
      (await store.listAuditLogs("dead")).map(({ event, turn_index, details }) => ({
        event,
        turn_index,
        details,
      })),
    ).toStrictEqual([
      {
        event: "turn_interrupted",
        turn_index: 1,
        details: { runner: "9@h", reason: "its process ended before the turn did" },
      },
    ]);
  });

  it("claimTurn writes the new turn's first audit row with it, after the interrupted ones, redacted", async () => {
    const store = getStore();
    await store.createSession({ title: "audited", config: {}, session_id: "audited" });
    await store.claimTurn("audited", { user_message: "first", runner: "9@h" });
    const key = "sk-live-0123456789abcdefghijklmnop";
    const claimed = await store.claimTurn("audited", {
      user_message: "second",
      runner: "10@h",
      is_runner_alive: dead,
      audit: { event: "turn_start", details: { tools: ["mock_search"], note: `key ${key}` } },
    });
    expect(claimed.turn_index).toBe(2);
    const audit = await store.listAuditLogs("audited");
    expect(
      audit.map(({ event, turn_index, round_index }) => [event, turn_index, round_index]),
    ).toEqual([
      ["turn_interrupted", 1, null],
      ["turn_start", 2, null],
    ]);
    expect(audit[1]?.details).toStrictEqual({ tools: ["mock_search"], note: "key [redacted]" });
  });

  it("claimTurn refuses an unknown session and bad input, storing nothing", async () => {
    const store = getStore();
    await expect(
      Promise.resolve().then(() => store.claimTurn("nobody", { user_message: "x", runner: "1@h" })),
    ).rejects.toBeInstanceOf(SessionNotFoundError);
    await store.createSession({ title: "input", config: {}, session_id: "input" });
    for (const options of [
      { user_message: "x", runner: "" },
      { user_message: 3, runner: "1@h" },
      { user_message: "x", runner: "1@h", is_runner_alive: "yes" },
      { user_message: "x", runner: "1@h", turn_index: 4 },
      { user_message: "x", runner: "1@h", audit: { event: "", details: {} } },
      { user_message: "x", runner: "1@h", audit: { event: "turn_start", details: [] } },
    ]) {
      await expect(
        Promise.resolve().then(() =>
          store.claimTurn("input", options as unknown as Parameters<SessionStore["claimTurn"]>[1]),
        ),
      ).rejects.toBeInstanceOf(InvalidInputError);
    }
    expect(await store.listTurns("input")).toStrictEqual([]);
    expect(await store.listMessages("input")).toStrictEqual([]);
    expect(await store.listAuditLogs("input")).toStrictEqual([]);
  });

  it("claimTurn with the session expected as its runner left it claims only that session", async () => {
    const store = getStore();
    // A synchronous store throws where an asynchronous one rejects: both are a rejection here.
    const claim = (sessionId: string, options: ClaimTurnOptions) =>
      Promise.resolve().then(() => store.claimTurn(sessionId, options));
    await store.createSession({ title: "kept", config: {}, session_id: "kept" });
    await store.claimTurn("kept", { user_message: "one", runner: "1@h" });
    await store.completeTurn("kept", { turn_index: 1, wall_time_ms: 3 });
    const left = await store.getStoredSessionConfig("kept");
    if (left === null) throw new Error("the session is missing");
    const expected = { updated_at: left.updated_at, incarnation: left.incarnation };
    // A later millisecond than turn 1's end: updated_at is what tells the writes after it apart.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await claim("kept", { user_message: "two", runner: "1@h", expected })).toStrictEqual({
      turn_index: 2,
      interrupted: [],
    });
    await store.completeTurn("kept", { turn_index: 2, wall_time_ms: 3 });

    // Written since (the claim and end of turn 2 moved updated_at): refused, nothing written.
    const state = async () => ({
      session: await store.getStoredSessionConfig("kept"),
      turns: await store.listTurns("kept"),
      messages: await store.listMessages("kept"),
      audit: await store.listAuditLogs("kept"),
      listed: (await store.listSessions()).find((session) => session.id === "kept"),
    });
    const before = await state();
    const audit = { event: "turn_start", details: {} };
    const stale = claim("kept", { user_message: "three", runner: "1@h", audit, expected });
    await expect(stale).rejects.toThrow(SessionChangedError);
    await expect(stale).rejects.toMatchObject({ code: "session_changed", sessionId: "kept" });
    expect(await state()).toStrictEqual(before);

    // Made anew under the same id, as an import over it does: the same updated_at, another
    // incarnation. Expected as it was before, it is refused.
    const now = before.session;
    if (now === null) throw new Error("the session is missing");
    const asItWas = { updated_at: now.updated_at, incarnation: now.incarnation };
    const document = await store.exportSession("kept");
    await store.deleteSession("kept");
    await store.importSession(document);
    const reborn = await state();
    expect(reborn.session?.updated_at).toBe(now.updated_at);
    expect(reborn.session?.incarnation).not.toBe(now.incarnation);
    await expect(
      claim("kept", { user_message: "three", runner: "1@h", expected: asItWas }),
    ).rejects.toThrow(SessionChangedError);
    expect(await state()).toStrictEqual(reborn);

    await expect(claim("gone", { user_message: "x", runner: "1@h", expected })).rejects.toThrow(
      SessionNotFoundError,
    );
    const fractional = { updated_at: now.updated_at, incarnation: 1.5 };
    await expect(
      claim("kept", { user_message: "x", runner: "1@h", expected: fractional }),
    ).rejects.toThrow(InvalidInputError);
  });
}
