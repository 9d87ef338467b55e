import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../domain/errors.js";
import { NO_KEY_ENV } from "./api-key-requirement.js";
import { OpenAIChatModel } from "./openai-chat-model.js";
import { resolveOpenAIConfig } from "./openai-config.js";

const KEY = "sk-test-CONFIG-55aa";

function configError(input: unknown, env: Record<string, string> = {}): Error {
  try {
    resolveOpenAIConfig(input, env);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as Error;
  }
  throw new Error("expected the config to be refused");
}

describe("resolveOpenAIConfig", () => {
  it("fills in openai-node's defaults", () => {
    const { config, apiKey } = resolveOpenAIConfig(
      { model: "gpt-4.1-mini" },
      { OPENAI_API_KEY: KEY },
    );
    expect(config).toEqual({
      model: "gpt-4.1-mini",
      base_url: "https://api.openai.com/v1",
      api_key_env: "OPENAI_API_KEY",
      headers: {},
      max_retries: 2,
      timeout_ms: 30_000,
      idle_timeout_ms: 60_000,
      deadline_ms: 300_000,
      backoff: { base_delay_ms: 500, max_delay_ms: 8_000 },
      send_reasoning: false,
    });
    expect(apiKey).toBe(KEY);
  });

  it("accepts send_reasoning as false or a field name, and refuses anything else", () => {
    const env = { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" };
    for (const value of [false, "reasoning_content", "reasoning"] as const) {
      expect(
        resolveOpenAIConfig({ model: "m", send_reasoning: value }, env).config.send_reasoning,
      ).toBe(value);
    }
    expect(() => resolveOpenAIConfig({ model: "m", send_reasoning: true }, env)).toThrow(
      /send_reasoning/,
    );
    expect(() => resolveOpenAIConfig({ model: "m", send_reasoning: "thinking" }, env)).toThrow(
      /send_reasoning/,
    );
  });

  it("takes the base URL from OPENAI_BASE_URL unless configured, without trailing slashes", () => {
    const env = { OPENAI_BASE_URL: "http://127.0.0.1:11434/v1/" };
    expect(resolveOpenAIConfig({ model: "m" }, env).config.base_url).toBe(
      "http://127.0.0.1:11434/v1",
    );
    expect(
      resolveOpenAIConfig({ model: "m", base_url: "http://localhost:8000/v1//" }, env).config
        .base_url,
    ).toBe("http://localhost:8000/v1");
  });

  it("reads the key from OPENAI_API_KEY, or from the variable api_key_env names", () => {
    expect(resolveOpenAIConfig({ model: "m" }, { OPENAI_API_KEY: KEY }).apiKey).toBe(KEY);
    const env = { OPENAI_API_KEY: "other", MY_KEY: KEY };
    expect(resolveOpenAIConfig({ model: "m", api_key_env: "MY_KEY" }, env).apiKey).toBe(KEY);
    // Naming a variable that is unset is fine for an endpoint on this machine: it takes no key.
    const local = { model: "m", api_key_env: "UNSET_KEY", base_url: "http://localhost:11434/v1" };
    expect(resolveOpenAIConfig(local, env).apiKey).toBeNull();
  });

  it("says a missing key up front when the endpoint needs one, naming the variable and the URL", () => {
    expect(configError({ model: "m" }).message).toBe(
      "`OPENAI_API_KEY` is not set; the endpoint at https://api.openai.com/v1 needs a key",
    );
    // An empty variable is an unset one.
    const remote = { model: "m", base_url: "https://llm.example.com/v1", api_key_env: "LLM_KEY" };
    expect(configError(remote, { LLM_KEY: "  " }).message).toBe(
      "`LLM_KEY` is not set; the endpoint at https://llm.example.com/v1 needs a key",
    );
    // A remote endpoint named without api_key_env may take none (a LAN server): no key is sent.
    const lan = { model: "m", base_url: "http://10.0.0.5:8000/v1" };
    expect(resolveOpenAIConfig(lan, {}).apiKey).toBeNull();
    // Loopback never needs one, whatever the variable; nor does the gateway's no-key variable.
    for (const base_url of ["http://127.0.0.1:8080/v1", "http://[::1]:8080/v1"]) {
      expect(
        resolveOpenAIConfig({ model: "m", base_url, api_key_env: "LLM_KEY" }, {}).apiKey,
      ).toBeNull();
    }
    const noKey = { model: "m", base_url: "https://llm.example.com/v1", api_key_env: NO_KEY_ENV };
    expect(resolveOpenAIConfig(noKey, {}).apiKey).toBeNull();
  });

  it("names the field in every error", () => {
    expect(configError({}).message).toMatch(/^openai config: model: /);
    expect(configError({ model: "  " }).message).toContain("model:");
    expect(configError({ model: "m", max_retries: -1 }).message).toContain("max_retries:");
    expect(configError({ model: "m", timeout_ms: 0 }).message).toContain("timeout_ms:");
    expect(configError({ model: "m", deadline_ms: -1 }).message).toContain("deadline_ms:");
    expect(configError({ model: "m", idle_timeout_ms: "fast" }).message).toContain(
      "idle_timeout_ms:",
    );
    expect(configError({ model: "m", api_key_env: "not a name" }).message).toContain(
      "api_key_env:",
    );
    expect(configError({ model: "m", headers: { "bad header": "x" } }).message).toContain(
      "headers",
    );
    expect(configError({ model: "m", base_url: "ftp://example.com" }).message).toContain(
      "base_url:",
    );
    expect(configError({ model: "m" }, { OPENAI_BASE_URL: "nonsense" }).message).toContain(
      "base_url (from OPENAI_BASE_URL):",
    );
    expect(configError({ model: "m", modle: "typo" }).message).toContain("modle");
  });

  it("refuses a key in the config itself, without repeating it", () => {
    for (const input of [
      { model: "m", api_key: KEY },
      { model: "m", apiKey: KEY },
      { model: "m", headers: { Authorization: `Bearer ${KEY}` } },
    ]) {
      const error = configError(input);
      expect(error.message).toContain("environment");
      expect(error.message).not.toContain(KEY);
    }
    expect(configError({ model: "m", api_key: KEY }).message).toContain("api_key:");
    const withCredentials = configError({
      model: "m",
      base_url: `https://user:${KEY}@example.com/v1`,
    });
    expect(withCredentials.message).toContain("base_url:");
    expect(withCredentials.message).not.toContain(KEY);
  });
});

describe("OpenAIChatModel construction", () => {
  it("validates its config up front", () => {
    expect(() => new OpenAIChatModel({ model: "" }, { env: {} })).toThrow(/model/);
    expect(() => new OpenAIChatModel({ model: "m" }, { env: {} })).toThrow(
      "`OPENAI_API_KEY` is not set",
    );
  });

  it("keeps the key out of anything enumerable", () => {
    const chat = new OpenAIChatModel({ model: "m" }, { env: { OPENAI_API_KEY: KEY } });
    expect(JSON.stringify(chat)).not.toContain(KEY);
    expect(Object.values(chat).join(" ")).not.toContain(KEY);
    expect(chat.baseUrl).toBe("https://api.openai.com/v1");
  });
});
