import { describe, expect, it } from "vitest";
import { configOverrides, NO_CHANGES } from "./config-overrides.js";

const source = {
  tool_invocation_mode: "dual_agent",
  chat_agent: { model: "sim", system_prompt: "Be brief.", options: { first_token_ms: 5 } },
  event_agent: { model: "sim" },
  tools: ["mock_search"],
};

describe("configOverrides", () => {
  it("asks for nothing when nothing changes (or a change equals the source)", () => {
    expect(configOverrides(source, NO_CHANGES)).toBeUndefined();
    expect(
      configOverrides(source, {
        mode: "dual_agent",
        chat_model: "sim",
        system_prompt: "Be brief.",
      }),
    ).toBeUndefined();
  });

  it("sends only what changes: the mode, the chat agent's model", () => {
    expect(configOverrides(source, { ...NO_CHANGES, mode: "chat_agent_tools" })).toEqual({
      tool_invocation_mode: "chat_agent_tools",
    });
    expect(configOverrides(source, { ...NO_CHANGES, chat_model: "sim:other" })).toEqual({
      chat_agent: { model: "sim:other" },
    });
  });

  it("removes (null) sim options for another provider's model, and an emptied prompt", () => {
    expect(
      configOverrides(source, { mode: "", chat_model: " openai:gpt-x ", system_prompt: "" }),
    ).toEqual({ chat_agent: { model: "openai:gpt-x", options: null, system_prompt: null } });
    expect(configOverrides(source, { ...NO_CHANGES, system_prompt: "Be kind." })).toEqual({
      chat_agent: { system_prompt: "Be kind." },
    });
  });
});
