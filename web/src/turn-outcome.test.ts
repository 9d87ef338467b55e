import { describe, expect, it } from "vitest";
import type { ToolCardData } from "./transcript.js";
import { isRetryable, turnOutcome } from "./turn-outcome.js";

const card = (state: ToolCardData["state"]): ToolCardData => ({
  id: "c",
  name: "mock_search",
  arguments: null,
  raw_arguments: "{}",
  requested_raw_arguments: null,
  state,
  result: null,
  latency_ms: null,
  used_fallback: false,
  fallback: null,
});

const withTools = (status: string, states: ToolCardData["state"][]) =>
  turnOutcome({
    status: status as never,
    rounds: [
      {
        round_index: 1,
        text: "",
        reasoning: "",
        refusal: "",
        tools: states.map(card),
        finish_reason: null,
      },
    ],
  });

describe("turnOutcome", () => {
  it("is not a plain success when every tool call failed", () => {
    expect(withTools("completed", ["error"])).toMatchObject({
      label: "completed · its tool call failed",
      tone: "warn",
      all_tools_failed: true,
    });
    expect(withTools("completed", ["error", "error"]).label).toBe(
      "completed · all 2 tool calls failed",
    );
  });

  it("says which failed when some worked, and is a success", () => {
    expect(withTools("completed", ["error", "ok"])).toMatchObject({
      label: "completed · 1 of 2 tool calls failed",
      tone: "ok",
      all_tools_failed: false,
    });
  });

  it("keeps the stored status otherwise", () => {
    expect(withTools("completed", [])).toMatchObject({ label: "completed", tone: "ok" });
    expect(withTools("completed", ["ok"])).toMatchObject({ label: "completed", tone: "ok" });
    expect(withTools("failed", ["error"])).toMatchObject({ label: "failed", tone: "error" });
    expect(withTools("max_rounds", [])).toMatchObject({ label: "max rounds", tone: "warn" });
  });
});

describe("isRetryable", () => {
  it("accepts the statuses the retry endpoint accepts", () => {
    expect(["failed", "cancelled", "interrupted", "max_rounds"].every(isRetryable)).toBe(true);
    expect(isRetryable("completed")).toBe(false);
    expect(isRetryable("running")).toBe(false);
  });
});
