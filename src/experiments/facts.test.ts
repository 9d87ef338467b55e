import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "../../test/paths.js";
import {
  collectTurn,
  MODES,
  openTemporaryStore,
  type TemporaryStore,
} from "../../test/runtime/turn-harness.js";
import { policyApprover } from "../domain/approvals.js";
import type { LabSessionConfigInput } from "../domain/session-config.js";
import { readRunFacts } from "./facts.js";
import { scoreRun } from "./score.js";
import { expandCells, loadSuite } from "./suite.js";

describe.each(MODES)("readRunFacts after real turns on the sim model, %s", (mode) => {
  let lab: TemporaryStore;
  beforeEach(() => {
    lab = openTemporaryStore();
  });
  afterEach(() => lab.dispose());

  const turn = async (message: string, config: LabSessionConfigInput = {}) => {
    const { end, error } = await collectTurn({
      store: lab.store,
      session_id: "run",
      message,
      config: { tool_invocation_mode: mode, ...config },
      approve: policyApprover("all"),
    });
    expect(error).toBeNull();
    return end;
  };

  it("reads each turn: status, answer, rounds, tool calls, timings and tokens", async () => {
    const first = await turn(
      "search for sqlite wal mode and file a ticket about checkpoint stalls",
    );
    await turn("hello");
    const facts = await readRunFacts(lab.store, "run");
    expect(facts).toHaveLength(2);
    const [tools, greeting] = facts;
    expect(tools).toMatchObject({
      status: "completed",
      rounds: 2,
      tool_calls: [
        {
          name: "mock_search",
          arguments: { query: "sqlite wal mode" },
          ok: true,
          used_fallback: false,
        },
        {
          name: "mock_ticket",
          arguments: { title: "checkpoint stalls" },
          ok: true,
          used_fallback: false,
        },
      ],
      fallback_count: 0,
      tool_count: 2,
    });
    expect(tools?.answer).toBe(first?.answer);
    expect(tools?.answer).toContain("mock_search found 3 results");
    expect(tools?.answer).toMatch(/TCK-\d{6}/);
    expect(tools?.ttft_ms).toEqual(expect.any(Number));
    expect(tools?.wall_time_ms).toBe(first?.wall_time_ms);
    expect(tools?.prompt_tokens).toBeGreaterThan(0);
    expect(tools?.completion_tokens).toBeGreaterThan(0);
    expect(tools?.total_tokens).toBe((tools?.prompt_tokens ?? 0) + (tools?.completion_tokens ?? 0));
    expect(greeting).toMatchObject({
      status: "completed",
      rounds: 1,
      tool_calls: [],
      tool_count: 0,
    });
    expect(greeting?.answer).toMatch(/^Hello!/);
    expect(greeting?.cached_tokens).toBeLessThanOrEqual(greeting?.prompt_tokens ?? 0);
  });

  it("keeps the final arguments, the fallback flag and failed tool replies", async () => {
    await turn("search for sqlite wal mode", {
      chat_agent: { model: "sim", options: { malformed_arguments_rate: 1 } },
      event_agent: { model: "sim" },
    });
    const [facts] = await readRunFacts(lab.store, "run");
    const [call] = facts?.tool_calls ?? [];
    if (mode === "dual_agent") {
      // The event agent repaired the arguments; what ran is what is stored.
      expect(call).toEqual({
        name: "mock_search",
        arguments: { query: "sqlite wal mode" },
        // The event agent's text, which ran: the chat agent's broken one is in the audit log.
        raw_arguments: '{"query":"sqlite wal mode"}',
        round: 1,
        ok: true,
        used_fallback: true,
      });
      expect(facts?.fallback_count).toBe(1);
    } else {
      // Native mode has no fallback: the invalid call went back to the model as a tool error.
      expect(call).toMatchObject({
        name: "mock_search",
        ok: false,
        used_fallback: false,
        round: 1,
      });
      expect(JSON.stringify(call?.arguments)).not.toBe(call?.raw_arguments);
      expect(call?.arguments).not.toEqual({ query: "sqlite wal mode" });
      expect(facts?.fallback_count).toBe(0);
      expect(facts?.answer).toContain("failed");
    }
    expect(facts?.tool_count).toBe(1);
  });

  it("reads a turn that hit the round limit", async () => {
    await turn("search for sqlite wal mode", { max_rounds: 1 });
    const [facts] = await readRunFacts(lab.store, "run");
    expect(facts).toMatchObject({ status: "max_rounds", rounds: 1 });
    expect(facts?.tool_calls.map((call) => call.name)).toEqual(["mock_search"]);
    expect(facts?.tool_calls[0]?.ok).toBe(true);
  });

  it("gives no turns for a session without any", async () => {
    expect(await readRunFacts(lab.store, "nothing")).toEqual([]);
  });
});

/** The bundled suite, scored on the sim model: what `bench` reports by default. */
describe("the bundled suite on the sim model", () => {
  const suite = loadSuite(join(repoRoot, "suites", "bundled.yaml"));

  it.each(expandCells(suite).map((cell) => [cell.id, cell] as const))(
    "passes in %s",
    async (_id, cell) => {
      const lab = openTemporaryStore();
      try {
        const failures: string[] = [];
        for (const scenario of suite.scenarios) {
          for (const { user } of scenario.turns) {
            const { error } = await collectTurn({
              store: lab.store,
              session_id: scenario.id,
              message: user,
              config: cell.config as LabSessionConfigInput,
              // As runExperiment does: the suite's approval policy.
              approve: policyApprover(suite.approval),
            });
            expect(error).toBeNull();
          }
          const score = scoreRun(
            scenario.turns.map((turn) => turn.expect),
            await readRunFacts(lab.store, scenario.id),
          );
          failures.push(...score.failures.map((failure) => `${scenario.id}: ${failure}`));
        }
        if (cell.mode === "chat_agent_tools" && cell.id.startsWith("sloppy-arguments")) {
          // No fallback in this mode: malformed arguments go back to the model as tool errors.
          expect(failures.length).toBeGreaterThan(0);
          expect(
            failures.every((failure) => /argument|expected|answer|failed/i.test(failure)),
          ).toBe(true);
        } else {
          expect(failures).toEqual([]);
        }
      } finally {
        lab.dispose();
      }
    },
  );
});
