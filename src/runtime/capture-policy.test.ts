import { describe, expect, it } from "vitest";
import { CaptureConfig } from "../domain/call-capture.js";
import { isLoopbackUrl } from "../domain/loopback-url.js";
import { capturesPayloads } from "./capture-policy.js";

const SIM = { simulated: true };
const OPENAI_DEFAULT = "https://api.openai.com/v1";
const remote = (baseUrl: string) => ({ simulated: false, baseUrl });

describe("capturesPayloads", () => {
  const auto = CaptureConfig.parse({});

  it("auto: on for the simulated model and loopback endpoints, off for any other endpoint", () => {
    expect(capturesPayloads(auto, SIM)).toBe(true);
    expect(capturesPayloads(auto, SIM)).toBe(true);
    expect(capturesPayloads(auto, remote("http://127.0.0.1:8080/v1"))).toBe(true);
    expect(capturesPayloads(auto, remote("http://localhost:11434/v1"))).toBe(true);
    expect(capturesPayloads(auto, remote("http://[::1]:8080/v1"))).toBe(true);
    // OpenAI's own endpoint and any hosted one are someone else's service.
    expect(capturesPayloads(auto, remote(OPENAI_DEFAULT))).toBe(false);
    expect(capturesPayloads(auto, remote("https://openrouter.ai/api/v1"))).toBe(false);
    expect(capturesPayloads(auto, remote("http://192.168.1.20:8080/v1"))).toBe(false);
  });

  it("on and off decide for every endpoint", () => {
    const on = CaptureConfig.parse({ payloads: "on" });
    const off = CaptureConfig.parse({ payloads: "off" });
    expect(capturesPayloads(on, remote(OPENAI_DEFAULT))).toBe(true);
    expect(capturesPayloads(off, SIM)).toBe(false);
    expect(capturesPayloads(off, remote("http://127.0.0.1:1/v1"))).toBe(false);
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
