import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../../test/paths.js";
import type { AppendUsageOptions } from "../store-inputs.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { TURN_AGGREGATE_SQL } from "./usage-rollups.js";

/**
 * The turns' roll-ups are kept by a trigger as calls are recorded (turn-usage.ts). Whatever the
 * calls, they must be the figures a GROUP BY over the calls gives, which is what they replace.
 */

/** A deterministic spread of calls: model calls priced or not, reported costs, tools, fallbacks. */
function call(index: number, turnIndex: number): AppendUsageOptions {
  const prompt = 10 + (index % 7);
  const completion = index % 5;
  const kind = index % 6 === 0 ? "tool_execution" : index % 9 === 0 ? "argument_fallback" : null;
  return {
    turn_index: turnIndex,
    round_index: 1 + (index % 3),
    usage:
      kind === "tool_execution"
        ? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }
        : {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            cached_tokens: index % 4,
            reasoning_tokens: Math.min(completion, index % 2),
          },
    elapsed_ms: index % 13,
    metadata: {
      metric_key: `call-${index}`,
      ...(kind === "tool_execution"
        ? { call_kind: "tool_execution", tool_latency_ms: 3 }
        : kind === "argument_fallback"
          ? { call_kind: "argument_fallback", agent: "event_agent", used_fallback: true }
          : {}),
      ...(index % 4 === 1 ? { cost_usd: 0.0001 * index } : {}),
      ...(index % 4 === 2 ? { cost_estimated_usd: 0.00003 * index } : {}),
      ...(index % 8 === 3 ? { estimated: true } : {}),
    },
  };
}

describe("SqliteSessionStore: the turns' roll-ups kept as calls are recorded", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  function groupByOverCalls(path: string, sessionId: string) {
    const raw = new Database(path, { readonly: true });
    try {
      return raw.prepare(TURN_AGGREGATE_SQL).all(sessionId);
    } finally {
      raw.close();
    }
  }

  it("equal the GROUP BY over the calls, through appendUsage, appendRecords, a retry and an import", async () => {
    const path = join(directory.path, "lab.sqlite3");
    const store = new SqliteSessionStore(path);
    try {
      await store.createSession({ title: "many calls", config: {}, session_id: "s" });
      for (let turn = 1; turn <= 4; turn++) {
        await store.startTurn("s", { turn_index: turn, user_message: `turn ${turn}` });
      }
      for (let index = 0; index < 60; index++) store.appendUsage("s", call(index, 1 + (index % 3)));
      store.appendRecords("s", {
        usage: Array.from({ length: 20 }, (_, offset) => call(60 + offset, 4)),
      });
      // Retries of recorded keys change nothing.
      expect(store.appendUsage("s", call(5, 3))).toBe(false);
      store.appendRecords("s", { usage: [call(61, 4), call(62, 4)] });

      const expected = groupByOverCalls(path, "s");
      const { turns } = store.usageRollups("s");
      expect(turns.map(({ turn_wall_time_ms: _, ...turn }) => turn)).toEqual(
        expected.map((row) => expect.objectContaining(closeCosts(row as Record<string, unknown>))),
      );
      expect(turns.map((turn) => turn.call_count)).toEqual([20, 20, 20, 20]);
      // A turn's own roll-up, what its end reports (read by column position), is the same.
      for (const turn of turns) {
        expect(store.appendRecords("s", { rollup_turn: turn.turn_index }).turn_rollup).toEqual(
          turn,
        );
      }

      // An imported copy gets its roll-ups from the same trigger.
      const copy = store.importSession(store.exportSession("s"), { session_id: "copy" });
      expect(store.usageRollups(copy)).toEqual(store.usageRollups("s"));
      // Deleting the session takes its roll-ups with it; the original's are untouched.
      store.deleteSession(copy);
      const raw = new Database(path, { readonly: true });
      expect(
        raw.prepare("SELECT COUNT(*) AS n FROM turn_usage WHERE session_id = 'copy'").get(),
      ).toEqual({
        n: 0,
      });
      raw.close();
      expect(store.usageRollups("s").turns).toEqual(turns);
    } finally {
      store.close();
    }
  });

  it("are rebuilt from the calls when a version-4 file is upgraded", async () => {
    const path = join(directory.path, "v4.sqlite3");
    const store = new SqliteSessionStore(path);
    await store.createSession({ title: "old", config: {}, session_id: "old" });
    await store.startTurn("old", { turn_index: 1, user_message: "hi" });
    for (let index = 1; index < 12; index++) store.appendUsage("old", call(index, 1));
    const before = store.usageRollups("old");
    store.close();
    // As version 4 left it: no turn_usage table, no trigger.
    const raw = new Database(path);
    raw.exec("DROP TRIGGER usage_stats_turn_usage; DROP TABLE turn_usage");
    raw.pragma("user_version = 4");
    raw.close();

    const reopened = new SqliteSessionStore(path);
    try {
      expect(reopened.usageRollups("old")).toEqual(before);
      expect(reopened.usageRollups("old").session.call_count).toBe(11);
    } finally {
      reopened.close();
    }
  });
});

/** Costs are sums of floats: compared to the GROUP BY's to 12 digits, everything else exactly. */
function closeCosts(row: Record<string, unknown>): Record<string, unknown> {
  const { cost_usd, ...rest } = row;
  return {
    ...rest,
    cost_usd: typeof cost_usd === "number" ? expect.closeTo(cost_usd, 12) : cost_usd,
  };
}
