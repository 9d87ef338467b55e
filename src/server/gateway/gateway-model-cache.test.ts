import { describe, expect, it } from "vitest";
import { LabConfigFile } from "../../domain/tool-sources.js";
import { GatewayModelCache } from "./gateway-model-cache.js";
import { resolveGatewayModel } from "./upstream-resolution.js";

const labConfig = LabConfigFile.parse({
  upstreams: {
    local: { base_url: "http://127.0.0.1:11434/v1", model: "qwen3:8b" },
    other: { base_url: "http://127.0.0.1:8000/v1", model: "m", event_model: "sim" },
    byok: { base_url: "https://router.example.com/api/v1", model: "x/y", pass_client_key: true },
  },
});
const env = { OPENAI_API_KEY: "sk-lab-openai-key-000000" };
const neverCalled: typeof fetch = () => Promise.reject(new Error("no call in this test"));

describe("GatewayModelCache", () => {
  it("builds an upstream's adapters once and hands every request the same ones", () => {
    const cache = new GatewayModelCache(neverCalled);
    const first = cache.models(resolveGatewayModel("local", labConfig, { env }));
    const again = cache.models(resolveGatewayModel("local", labConfig, { env }));
    expect(again.chat).toBe(first.chat);
    // The event agent's selection is the chat agent's: one adapter serves both.
    expect(first.event).toBe(first.chat);
    expect(first.chat.model).toBe("qwen3:8b");
    expect(first.chat.baseUrl).toBe("http://127.0.0.1:11434/v1");
    expect(cache.size).toBe(1);
    // Another upstream is another adapter.
    const other = cache.models(resolveGatewayModel("other", labConfig, { env }));
    expect(other.chat).not.toBe(first.chat);
    expect(other.chat.model).toBe("m");
    expect(cache.size).toBe(2);
  });

  it("keeps no adapter holding a client's key, nor a simulated model", () => {
    const cache = new GatewayModelCache(neverCalled);
    const resolution = () =>
      resolveGatewayModel("byok", labConfig, { env, client_key: "sk-client-key-0000000" });
    const first = cache.models(resolution());
    expect(cache.models(resolution()).chat).not.toBe(first.chat);
    const sim = cache.models(resolveGatewayModel("sim", labConfig, { env }));
    expect(sim.chat.provider).toBe("sim");
    expect(cache.models(resolveGatewayModel("sim", labConfig, { env })).chat).not.toBe(sim.chat);
    // `other`'s event agent is the sim: its chat adapter is kept, its event model is not.
    const other = cache.models(resolveGatewayModel("other", labConfig, { env }));
    expect(cache.models(resolveGatewayModel("other", labConfig, { env })).event).not.toBe(
      other.event,
    );
    expect(cache.size).toBe(1);
  });

  it("stays bounded when clients name many models: the oldest is built again", () => {
    const cache = new GatewayModelCache(neverCalled);
    const first = cache.models(resolveGatewayModel("openai:model-0", labConfig, { env })).chat;
    for (let index = 1; index <= 64; index++) {
      cache.models(resolveGatewayModel(`openai:model-${index}`, labConfig, { env }));
    }
    expect(cache.size).toBe(64);
    const rebuilt = cache.models(resolveGatewayModel("openai:model-0", labConfig, { env })).chat;
    expect(rebuilt).not.toBe(first);
    expect(rebuilt.model).toBe("model-0");
    expect(cache.size).toBe(64);
  });

  it("offers a tapped fetch for an OpenAI-compatible chat upstream only, its adapter shared", () => {
    const tapsMade: unknown[] = [];
    const cache = new GatewayModelCache(neverCalled, (tap) => {
      tapsMade.push(tap);
      return neverCalled;
    });
    const models = cache.models(resolveGatewayModel("local", labConfig, { env }));
    const tap = { bytes: () => {} };
    expect(models.tappedFetch?.(tap)).toBe(neverCalled);
    expect(tapsMade).toEqual([tap]);
    // The adapter stays the shared one: the tap goes with the call (StreamOptions.fetch).
    expect(cache.models(resolveGatewayModel("local", labConfig, { env })).chat).toBe(models.chat);
    const byok = resolveGatewayModel("byok", labConfig, { env, client_key: "sk-client-000000000" });
    expect(cache.models(byok).tappedFetch).toBeDefined();
    // No wire to tap: the sim.
    expect(
      cache.models(resolveGatewayModel("sim", labConfig, { env })).tappedFetch,
    ).toBeUndefined();
    const untapped = new GatewayModelCache(neverCalled);
    expect(
      untapped.models(resolveGatewayModel("local", labConfig, { env })).tappedFetch,
    ).toBeUndefined();
  });
});
