import { describe, expect, it } from "vitest";
import {
  gatewayDescription,
  gatewayMarkOf,
  isGatewayConfig,
  isGatewaySession,
} from "./gateway-mark.js";

describe("gateway sessions in the UI", () => {
  it("reads the config's mark, and nothing from a config without one", () => {
    expect(
      gatewayMarkOf({
        gateway: { requested_model: "local", upstream: "local", grouped_by: "header" },
      }),
    ).toEqual({ requested_model: "local", upstream: "local", grouped_by: "header" });
    expect(gatewayMarkOf({})).toBeNull();
    expect(gatewayMarkOf({ gateway: "yes" })).toBeNull();
    expect(gatewayMarkOf({ gateway: [] })).toBeNull();
    expect(gatewayMarkOf({ gateway: { upstream: "local" } })).toBeNull();
    // A mark from another build: what can be read is shown.
    expect(gatewayMarkOf({ gateway: { requested_model: "sim", grouped_by: 3 } })).toEqual({
      requested_model: "sim",
      upstream: null,
      grouped_by: null,
    });
  });

  it("knows a session page's config by its mark, else its tag", () => {
    expect(isGatewayConfig({ gateway: { requested_model: "sim" } })).toBe(true);
    expect(isGatewayConfig({ gateway: 42, tags: ["gateway"] })).toBe(true);
    expect(isGatewayConfig({ tags: ["bench"] })).toBe(false);
    expect(isGatewayConfig({ tags: "gateway" })).toBe(false);
  });

  it("knows a list row by its tag", () => {
    expect(isGatewaySession(["gateway"])).toBe(true);
    expect(isGatewaySession(["bench", "gateway"])).toBe(true);
    expect(isGatewaySession(["gateway-ish", "bench"])).toBe(false);
    expect(isGatewaySession([])).toBe(false);
  });

  it("says where the requests went and how the session was found", () => {
    expect(
      gatewayDescription({ requested_model: "local", upstream: "local", grouped_by: "header" }),
    ).toBe(
      "Recorded through the gateway (/v1): upstream local; named by the X-Agent-Lab-Session header",
    );
    expect(
      gatewayDescription({
        requested_model: "openai:gpt-4.1-mini",
        upstream: null,
        grouped_by: "conversation",
      }),
    ).toBe(
      "Recorded through the gateway (/v1): model openai:gpt-4.1-mini; grouped by conversation",
    );
    expect(
      gatewayDescription({ requested_model: "fast", upstream: "local", grouped_by: null }),
    ).toBe("Recorded through the gateway (/v1): upstream local (requested fast)");
    expect(gatewayDescription(null)).toContain("through the gateway");
  });
});
