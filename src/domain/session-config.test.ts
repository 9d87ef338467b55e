import { describe, expect, it } from "vitest";
import { LabSessionConfig } from "./session-config.js";

describe("LabSessionConfig", () => {
  it("gives an empty config the simulated model, the built-in tools, dual_agent and six rounds", () => {
    const config = LabSessionConfig.parse({});
    expect(config.tool_invocation_mode).toBe("dual_agent");
    expect(config.chat_agent.model).toBe("sim");
    expect(config.event_agent.model).toBe("sim");
    expect(config.tools).toEqual(["mock_search", "mock_ticket"]);
    expect(config.max_rounds).toBe(6);
    expect(config.approvals).toEqual({});
    expect(config.approval_timeout_ms).toBe(600_000);
  });

  it("takes per-tool approval overrides and a timeout, and names a bad one", () => {
    const config = LabSessionConfig.parse({
      approvals: { mock_ticket: false },
      approval_timeout_ms: 5_000,
    });
    expect(config.approvals).toEqual({ mock_ticket: false });
    const bad = LabSessionConfig.safeParse({ approvals: { mock_ticket: "no" } });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues[0]?.path)).toBe('["approvals","mock_ticket"]');
    expect(LabSessionConfig.safeParse({ approval_timeout_ms: 0 }).success).toBe(false);
  });

  it("puts the event agent on the chat agent's endpoint when the config names none", () => {
    const config = LabSessionConfig.parse({
      chat_agent: {
        model: "openai:gpt-4.1-mini",
        base_url: "http://127.0.0.1:11434/v1",
        api_key_env: "LOCAL_KEY",
        temperature: 0.2,
      },
    });
    expect(config.event_agent).toMatchObject({
      model: "openai:gpt-4.1-mini",
      base_url: "http://127.0.0.1:11434/v1",
      api_key_env: "LOCAL_KEY",
    });
    expect(config.event_agent.temperature).toBeUndefined();
  });

  it("keeps an event agent the config names, and unknown keys", () => {
    const config = LabSessionConfig.parse({
      chat_agent: { model: "openai:big" },
      event_agent: { model: "sim:small" },
      experiment: { cell: 3 },
    });
    expect(config.event_agent.model).toBe("sim:small");
    expect(config.experiment).toEqual({ cell: 3 });
  });

  it("refuses secrets and bad values, naming the field", () => {
    expect(
      LabSessionConfig.safeParse({ chat_agent: { api_key: "sk-1" } }).error?.issues[0]?.path,
    ).toEqual(["chat_agent", "api_key"]);
    expect(LabSessionConfig.safeParse({ max_rounds: 0 }).error?.issues[0]?.path).toEqual([
      "max_rounds",
    ]);
    expect(LabSessionConfig.safeParse({ tool_invocation_mode: "both" }).success).toBe(false);
  });
});
