import { describe, expect, it } from "vitest";
import { CaptureConfig } from "../domain/call-capture.js";
import { capturesPayloads, isLoopbackUrl } from "./capture-policy.js";

describe("capturesPayloads", () => {
  const auto = CaptureConfig.parse({});

  it("auto: on for the simulated model and loopback endpoints, off for any other endpoint", () => {
    expect(capturesPayloads(auto, { model: "sim" })).toBe(true);
    expect(capturesPayloads(auto, { model: "sim:fast" })).toBe(true);
    expect(
      capturesPayloads(auto, { model: "openai:llama", base_url: "http://127.0.0.1:8080/v1" }),
    ).toBe(true);
    expect(
      capturesPayloads(auto, { model: "openai:llama", base_url: "http://localhost:11434/v1" }),
    ).toBe(true);
    expect(
      capturesPayloads(auto, { model: "openai:llama", base_url: "http://[::1]:8080/v1" }),
    ).toBe(true);
    // OpenAI's own endpoint (no base_url) and any hosted one are someone else's service.
    expect(capturesPayloads(auto, { model: "openai:gpt-4.1-mini" })).toBe(false);
    expect(
      capturesPayloads(auto, { model: "openai:x", base_url: "https://openrouter.ai/api/v1" }),
    ).toBe(false);
    expect(
      capturesPayloads(auto, { model: "openai:x", base_url: "http://192.168.1.20:8080/v1" }),
    ).toBe(false);
  });

  it("on and off decide for every endpoint", () => {
    const on = CaptureConfig.parse({ payloads: "on" });
    const off = CaptureConfig.parse({ payloads: "off" });
    expect(capturesPayloads(on, { model: "openai:gpt-4.1-mini" })).toBe(true);
    expect(capturesPayloads(off, { model: "sim" })).toBe(false);
    expect(capturesPayloads(off, { model: "openai:x", base_url: "http://127.0.0.1:1/v1" })).toBe(
      false,
    );
  });
});

describe("isLoopbackUrl", () => {
  it.each([
    ["http://127.0.0.1:8080/v1", true],
    ["http://127.255.3.4/v1", true],
    ["http://localhost/v1", true],
    ["http://LOCALHOST:1234", true],
    ["http://api.localhost:8080", true],
    ["http://[::1]:8080/v1", true],
    ["http://[::ffff:127.0.0.1]/v1", true],
    ["https://api.openai.com/v1", false],
    ["http://128.0.0.1/v1", false],
    ["http://localhost.example.com/v1", false],
    ["http://127.0.0.1.nip.io/v1", false],
    ["http://[::2]/v1", false],
    ["http://0.0.0.0:8080", false],
    ["not a url", false],
  ])("%s → %s", (url, loopback) => {
    expect(isLoopbackUrl(url)).toBe(loopback);
  });
});
