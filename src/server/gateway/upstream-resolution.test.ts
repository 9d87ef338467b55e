import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../domain/errors.js";
import { ChatMessage } from "../../domain/messages.js";
import { LabConfigFile } from "../../domain/tool-sources.js";
import { createChatModel } from "../../providers/create-chat-model.js";
import type { OpenAIChatModel } from "../../providers/openai/openai-chat-model.js";
import {
  CLIENT_KEY_VARIABLE,
  GatewayClientKeyMissingError,
  GatewayModelNotFoundError,
  NO_KEY_VARIABLE,
  resolveGatewayModel,
} from "./upstream-resolution.js";

const labConfig = LabConfigFile.parse({
  upstreams: {
    local: { base_url: "http://127.0.0.1:11434/v1", model: "qwen3:8b" },
    paid: {
      base_url: "https://api.example.com/v1",
      model: "big-1",
      api_key_env: "PAID_KEY",
      mode: "dual_agent",
      event_model: "local",
      options: { max_retries: 0 },
    },
    byok: {
      base_url: "https://router.example.com/api/v1",
      model: "some/model",
      pass_client_key: true,
      event_model: "openai:gpt-4.1-mini",
    },
    repaired: { base_url: "http://127.0.0.1:8000/v1", model: "m", event_model: "sim" },
    broken: { base_url: "http://127.0.0.1:8000/v1", model: "m", event_model: "nothing" },
  },
});

const env = { OPENAI_API_KEY: "sk-lab-openai-key-000000", PAID_KEY: "paid-key-0000000000" };

describe("resolveGatewayModel", () => {
  it("sim and openai:MODEL are the lab's own model strings, in chat_agent_tools by default", () => {
    for (const model of ["sim", "sim:fast", "openai:gpt-4.1-mini"]) {
      const resolved = resolveGatewayModel(model, labConfig, { env });
      expect(resolved).toEqual({
        chat_agent: { model, options: {} },
        event_agent: { model, options: {} },
        mode: "chat_agent_tools",
        pass_client_key: false,
        upstream: null,
        capture: "auto",
        env,
      });
    }
    // No lab config at all: the lab strings still work.
    expect(resolveGatewayModel("sim", null, { env }).upstream).toBeNull();
  });

  it("an upstream becomes an openai selection with its URL, key variable and options", () => {
    const resolved = resolveGatewayModel("paid", labConfig, { env });
    expect(resolved.chat_agent).toEqual({
      model: "openai:big-1",
      base_url: "https://api.example.com/v1",
      api_key_env: "PAID_KEY",
      options: { max_retries: 0 },
    });
    // event_model names another upstream; the mode is the upstream's.
    expect(resolved.event_agent).toEqual({
      model: "openai:qwen3:8b",
      base_url: "http://127.0.0.1:11434/v1",
      api_key_env: NO_KEY_VARIABLE,
      options: {},
    });
    expect(resolved.mode).toBe("dual_agent");
    expect(resolved.upstream).toBe("paid");
    expect(resolved.pass_client_key).toBe(false);
    const model = createChatModel(resolved.chat_agent, { env: resolved.env }) as OpenAIChatModel;
    expect(model.baseUrl).toBe("https://api.example.com/v1");
    expect(model.model).toBe("big-1");
  });

  it("the event agent defaults to the chat agent's; a lab string is taken as is", () => {
    const local = resolveGatewayModel("local", labConfig, { env });
    expect(local.event_agent).toEqual(local.chat_agent);
    expect(local.event_agent).not.toBe(local.chat_agent);
    expect(resolveGatewayModel("repaired", labConfig, { env }).event_agent).toEqual({
      model: "sim",
      options: {},
    });
    expect(() => resolveGatewayModel("broken", labConfig, { env })).toThrow(
      /upstreams\.broken\.event_model: "nothing" is neither/,
    );
  });

  it("an upstream without api_key_env sends no key, never OPENAI_API_KEY", async () => {
    const resolved = resolveGatewayModel("local", labConfig, {
      env: { ...env, [NO_KEY_VARIABLE]: "set-by-someone-0000" },
    });
    expect(resolved.chat_agent.api_key_env).toBe(NO_KEY_VARIABLE);
    expect(resolved.env[NO_KEY_VARIABLE]).toBeUndefined();
    const seen: (string | null)[] = [];
    const model = createChatModel(resolved.chat_agent, {
      env: resolved.env,
      fetch: async (_url, init) => {
        seen.push(new Headers(init?.headers).get("authorization"));
        return new Response("{}", { status: 400 });
      },
    });
    await expect(async () => {
      for await (const _ of model.stream({
        messages: [ChatMessage.parse({ role: "user", content: "hi" })],
      })) {
      }
    }).rejects.toThrow();
    expect(seen).toEqual([null]);
  });

  it("mode: a valid X-Agent-Lab-Mode wins; an invalid one names the allowed values", () => {
    expect(
      resolveGatewayModel("paid", labConfig, { env, mode_header: "chat_agent_tools" }).mode,
    ).toBe("chat_agent_tools");
    expect(resolveGatewayModel("sim", labConfig, { env, mode_header: " dual_agent " }).mode).toBe(
      "dual_agent",
    );
    expect(() => resolveGatewayModel("sim", labConfig, { env, mode_header: "fast" })).toThrow(
      InvalidInputError,
    );
    expect(() => resolveGatewayModel("sim", labConfig, { env, mode_header: "fast" })).toThrow(
      'X-Agent-Lab-Mode: "fast" is not a mode; use chat_agent_tools or dual_agent',
    );
  });

  it("anything else is model_not_found, listing the upstreams and the lab's strings", () => {
    for (const model of ["gpt-4o", "openai:", "constructor", "__proto__", "Local", "simulator"]) {
      let error: unknown;
      try {
        resolveGatewayModel(model, labConfig, { env });
      } catch (caught) {
        error = caught;
      }
      expect(error, model).toBeInstanceOf(GatewayModelNotFoundError);
      expect((error as Error).message).toContain(JSON.stringify(model));
      expect((error as GatewayModelNotFoundError).available).toEqual([
        "local",
        "paid",
        "byok",
        "repaired",
        "broken",
        "sim",
        "sim:NAME",
        "openai:MODEL",
      ]);
    }
  });

  it("pass_client_key: the client's key reaches the adapter through a per-request env copy only", async () => {
    expect(() => resolveGatewayModel("byok", labConfig, { env })).toThrow(
      GatewayClientKeyMissingError,
    );
    expect(() => resolveGatewayModel("byok", labConfig, { env, client_key: "  " })).toThrow(
      GatewayClientKeyMissingError,
    );
    const clientKey = "client-own-key-1234567890";
    const resolved = resolveGatewayModel("byok", labConfig, { env, client_key: clientKey });
    expect(resolved.pass_client_key).toBe(true);
    expect(resolved.chat_agent.api_key_env).toBe(CLIENT_KEY_VARIABLE);
    // The selections (what a session config stores) never hold the key; the env copy does.
    expect(JSON.stringify([resolved.chat_agent, resolved.event_agent])).not.toContain(clientKey);
    expect(resolved.env[CLIENT_KEY_VARIABLE]).toBe(clientKey);
    expect(resolved.env).not.toBe(env);
    expect(env).not.toHaveProperty(CLIENT_KEY_VARIABLE);
    // The event agent is the lab's openai adapter with the lab's own key.
    expect(resolved.event_agent).toEqual({ model: "openai:gpt-4.1-mini", options: {} });

    const seen: (string | null)[] = [];
    const model = createChatModel(resolved.chat_agent, {
      env: resolved.env,
      fetch: async (_url, init) => {
        seen.push(new Headers(init?.headers).get("authorization"));
        return new Response("{}", { status: 400 });
      },
    });
    await expect(async () => {
      for await (const _ of model.stream({
        messages: [ChatMessage.parse({ role: "user", content: "hi" })],
      })) {
      }
    }).rejects.toThrow();
    expect(seen).toEqual([`Bearer ${clientKey}`]);

    // Another request's key does not leak into this one's environment.
    const other = resolveGatewayModel("byok", labConfig, {
      env,
      client_key: "another-key-0987654321",
    });
    expect(other.env[CLIENT_KEY_VARIABLE]).toBe("another-key-0987654321");
    expect(resolved.env[CLIENT_KEY_VARIABLE]).toBe(clientKey);
  });

  it("a client key is ignored for an upstream that does not pass it", () => {
    const resolved = resolveGatewayModel("paid", labConfig, {
      env,
      client_key: "client-own-key-1234567890",
    });
    expect(JSON.stringify(resolved)).not.toContain("client-own-key");
    expect(resolved.env).toBe(env);
  });
});
