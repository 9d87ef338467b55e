/**
 * The same two-turn conversation with the simulated model gives the same usage whether it is
 * typed into the web UI's composer or sent through the HTTP API, in both tool modes: call for
 * call, every token count, source and cost; and the usage tab shows exactly those numbers.
 * (test/e2e/usage-across-faces.test.ts checks `chat`, `run` and the API against each other.)
 */
import { describe, expect, it } from "vitest";
import type { UsageCallRecord } from "../../src/domain/usage.js";
import { sessionCalls } from "./api-pages.js";
import {
  expectCleanPage,
  openSession,
  requireChromium,
  sendMessage,
  setUpLab,
  waitForTurnStatus,
} from "./harness.js";

requireChromium();

const e2e = setUpLab();

const MESSAGES = ["search for agent lab", "now search for sqlite wal mode"];

/** Every call of the session as the API serves them, page after page. */
const apiCalls = (sessionId: string): Promise<UsageCallRecord[]> =>
  sessionCalls(e2e.lab, sessionId);

/** What must not depend on the face: everything but ids, keys and clocks, in a stable order. */
function comparable(calls: UsageCallRecord[]) {
  return calls
    .map((call) => ({
      turn_index: call.turn_index,
      round_index: call.round_index,
      agent: call.agent,
      call_kind: call.call_kind,
      event_name: call.event_name,
      prompt_tokens: call.prompt_tokens,
      completion_tokens: call.completion_tokens,
      total_tokens: call.total_tokens,
      cached_tokens: call.cached_tokens,
      reasoning_tokens: call.reasoning_tokens,
      cache_write_tokens: call.cache_write_tokens,
      estimated: call.estimated,
      usage_source: call.usage_source,
      cost_usd: call.cost_usd,
      cost_estimated_usd: call.cost_estimated_usd,
    }))
    .sort((left, right) =>
      JSON.stringify([
        left.turn_index,
        left.round_index,
        left.agent,
        left.call_kind,
        left.event_name,
      ]).localeCompare(
        JSON.stringify([
          right.turn_index,
          right.round_index,
          right.agent,
          right.call_kind,
          right.event_name,
        ]),
      ),
    );
}

function config(mode: "dual_agent" | "chat_agent_tools") {
  return {
    tool_invocation_mode: mode,
    chat_agent: { model: "sim", options: { first_token_ms: 5, tokens_per_second: 4000 } },
    event_agent: { model: "sim", options: { first_token_ms: 5 } },
    tools: ["mock_search"],
  };
}

describe("usage does not depend on the face that ran the turn", () => {
  for (const mode of ["dual_agent", "chat_agent_tools"] as const) {
    it(`gives the same per-call usage through the UI's composer and the API (${mode})`, async () => {
      const throughApi = await e2e.lab.createSession(`E2E faces: API ${mode}`, config(mode));
      for (const message of MESSAGES) await e2e.lab.runTurn(throughApi, message);

      const throughUi = await e2e.lab.createSession(`E2E faces: UI ${mode}`, config(mode));
      const { page, ...opened } = await e2e.newPage();
      await openSession(page, e2e.lab, throughUi);
      for (const message of MESSAGES) {
        await sendMessage(page, message);
        await waitForTurnStatus(page, "completed");
      }

      const apiUsage = await apiCalls(throughApi);
      const uiUsage = await apiCalls(throughUi);
      expect(
        uiUsage.filter((call) => call.call_kind === "chat_completion").length,
      ).toBeGreaterThanOrEqual(2);
      expect(uiUsage.some((call) => call.cached_tokens > 0)).toBe(true);
      expect(comparable(uiUsage)).toEqual(comparable(apiUsage));

      // The usage tab shows each call's stored numbers: prompt, cached, completion, total.
      await page.getByTestId("tab-usage").click();
      const rows = page.getByTestId("call-row");
      await rows.first().waitFor({ state: "visible" });
      const shown = await rows.evaluateAll((elements) =>
        elements.map((row) =>
          [...row.querySelectorAll("td")].slice(3, 7).map((cell) => cell.textContent ?? ""),
        ),
      );
      const stored = [...uiUsage]
        .sort(
          (left, right) =>
            left.turn_index - right.turn_index ||
            left.round_index - right.round_index ||
            left.id - right.id,
        )
        .map((call) =>
          [call.prompt_tokens, call.cached_tokens, call.completion_tokens, call.total_tokens].map(
            (value) => value.toLocaleString("en-US"),
          ),
        );
      expect(shown).toEqual(stored);
      expectCleanPage({ page, ...opened });
    });
  }
});
