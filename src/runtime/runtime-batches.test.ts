import { describe, expect, it } from "vitest";
import { answerRound, fakeServerConfig, toolRound } from "../../test/runtime/scripted-turns.js";
import { collectTurn, MODES, useServerLab } from "../../test/runtime/turn-harness.js";
import type { LabSessionConfigInput } from "../domain/session-config.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import { vouchedClaim, vouchedRecords } from "../store/runtime-records.js";
import type { SessionStore } from "../store/session-store.js";
import { AppendRecordsOptions, ClaimTurnOptions } from "../store/store-inputs.js";

/**
 * The runtime hands the store its batches already in the store's checked shape, and the store
 * does not walk or copy them (store/runtime-records.ts). That holds only if every batch a turn
 * writes is exactly what the store's full check makes of it: here each batch of real turns, in
 * both modes, with payloads kept and not, with invalid arguments, a failing tool, a cancellation
 * and the round limit, goes through the zod schema whole and must come out equal, extra keys
 * refused (the schema's objects are strict). So does every turn's claim.
 */

/** The store, keeping every claim and batch it is handed (checked after the turn: a failed
 * expectation inside a store call would be one more store error for the turn to survive). */
function keeping(store: SessionStore, batches: unknown[], claims: unknown[]): SessionStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      const kept =
        property === "claimTurn" ? claims : property === "appendRecords" ? batches : null;
      if (kept === null) return value.bind(target);
      return (sessionId: string, input: unknown) => {
        kept.push(input);
        return value.call(target, sessionId, input);
      };
    },
  });
}

/** Each is its own zod output, and the store took it as the runtime's (not checked whole). */
function expectRuntimeShaped(batches: unknown[], claims: unknown[]): void {
  for (const batch of batches) {
    expect(AppendRecordsOptions.parse(batch)).toStrictEqual(batch);
    expect(vouchedRecords(batch)).toBe(batch);
  }
  for (const claim of claims) {
    expect(ClaimTurnOptions.parse(claim)).toStrictEqual(claim);
    expect(vouchedClaim(claim)).toBe(claim);
  }
}

describe.each(MODES)("the runtime's batches, %s", (mode) => {
  const lab = useServerLab({ strict: true });

  const turn = async (
    config: LabSessionConfigInput,
    message: string,
    options: { sim?: SimChatModel; stopAt?: string; session_id?: string } = {},
  ) => {
    const batches: unknown[] = [];
    const claims: unknown[] = [];
    const { end, error } = await collectTurn(
      {
        store: keeping(lab.store, batches, claims),
        session_id: options.session_id ?? "s",
        message,
        config,
        ...(options.sim ? { models: { chat: options.sim, event: options.sim } } : {}),
      },
      (event) => (event.type === options.stopAt ? "stop" : undefined),
    );
    expect(error).toBeNull();
    expect(claims).toHaveLength(1);
    expectRuntimeShaped(batches, claims);
    return { end, batches };
  };

  it("sim turns, payloads kept and not: every batch is its own zod output", async () => {
    const sim = new SimChatModel({});
    for (const payloads of ["off", "on"] as const) {
      const { end, batches } = await turn(
        { tool_invocation_mode: mode, capture: { payloads } },
        "search for sqlite wal mode",
        { sim, session_id: `payloads-${payloads}` },
      );
      expect(end?.status).toBe("completed");
      // A tool round and the answer with the turn's end.
      expect(batches).toHaveLength(2);
      const kept = (batches as { payloads: unknown[] }[]).flatMap((batch) => batch.payloads);
      expect(kept.length > 0).toBe(payloads === "on");
    }
  });

  it("invalid arguments, a failing tool, then the round limit", async () => {
    lab.server.enqueue(
      toolRound(mode, [
        { id: "call_a", name: "mock_search", arguments: '{"query":' },
        { id: "call_b", name: "mock_ticket", arguments: '{"title":""}' },
      ]),
      toolRound(mode, [{ id: "call_c", name: "mock_search", arguments: '{"query":"wal"}' }]),
    );
    const { end, batches } = await turn(
      fakeServerConfig(mode, lab.server, { max_rounds: 2 }),
      "search for sqlite wal mode",
    );
    expect(end?.status).toBe("max_rounds");
    expect(batches.length).toBeGreaterThanOrEqual(2);
  });

  it("a turn cancelled while its tool runs", async () => {
    lab.server.enqueue(
      toolRound(mode, [{ id: "call_a", name: "mock_search", arguments: '{"query":"wal"}' }]),
      answerRound("never sent"),
    );
    const { end, batches } = await turn(
      fakeServerConfig(mode, lab.server),
      "search for sqlite wal mode",
      { stopAt: "tool_call" },
    );
    expect(end).toBeUndefined();
    const stored = lab.store.listTurns("s").at(-1);
    expect(stored?.status).toBe("cancelled");
    expect(batches.length).toBeGreaterThanOrEqual(1);
  });
});
