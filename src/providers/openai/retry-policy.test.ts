import { describe, expect, it } from "vitest";
import {
  backoffDelayMs,
  isRetryableResponse,
  MAX_RETRY_AFTER_MS,
  requestedRetryDelayMs,
  retryDelayMs,
} from "./retry-policy.js";

const headers = (init: Record<string, string>) => new Headers(init);

describe("isRetryableResponse", () => {
  it("retries 408, 409, 429 and 5xx, and no other status", () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) {
      expect(isRetryableResponse(status, headers({})), String(status)).toBe(true);
    }
    for (const status of [400, 401, 403, 404, 413, 422]) {
      expect(isRetryableResponse(status, headers({})), String(status)).toBe(false);
    }
  });

  it("lets x-should-retry override the status rule both ways", () => {
    expect(isRetryableResponse(503, headers({ "x-should-retry": "false" }))).toBe(false);
    expect(isRetryableResponse(400, headers({ "x-should-retry": "true" }))).toBe(true);
    expect(isRetryableResponse(503, headers({ "x-should-retry": "maybe" }))).toBe(true);
  });
});

describe("requestedRetryDelayMs", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");

  it("reads retry-after-ms first, then retry-after in seconds", () => {
    expect(
      requestedRetryDelayMs(headers({ "retry-after-ms": "250", "retry-after": "9" }), now),
    ).toBe(250);
    expect(requestedRetryDelayMs(headers({ "retry-after": "2" }), now)).toBe(2_000);
    expect(requestedRetryDelayMs(headers({ "retry-after": "0.5" }), now)).toBe(500);
    expect(requestedRetryDelayMs(headers({ "retry-after": "0" }), now)).toBe(0);
  });

  it("reads retry-after as an HTTP date; a past date means now", () => {
    expect(
      requestedRetryDelayMs(headers({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }), now),
    ).toBe(3_000);
    expect(
      requestedRetryDelayMs(headers({ "retry-after": "Tue, 31 Dec 2024 23:00:00 GMT" }), now),
    ).toBe(0);
  });

  it("caps what it honours at a minute", () => {
    expect(requestedRetryDelayMs(headers({ "retry-after": "3600" }), now)).toBe(MAX_RETRY_AFTER_MS);
    expect(requestedRetryDelayMs(headers({ "retry-after-ms": "120000" }), now)).toBe(60_000);
  });

  it("ignores absent and unreadable values", () => {
    expect(requestedRetryDelayMs(headers({}), now)).toBeNull();
    expect(requestedRetryDelayMs(headers({ "retry-after": "soon" }), now)).toBeNull();
    expect(requestedRetryDelayMs(headers({ "retry-after-ms": "-5" }), now)).toBeNull();
    expect(requestedRetryDelayMs(headers({ "retry-after-ms": "" }), now)).toBeNull();
  });
});

describe("backoffDelayMs", () => {
  it("doubles from the base delay up to the cap, like openai-node (0.5 s, 8 s)", () => {
    const noJitter = () => 0;
    expect(
      [0, 1, 2, 3, 4, 5, 6].map((retry) => backoffDelayMs(retry, undefined, noJitter)),
    ).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it("takes off up to 25% as jitter", () => {
    expect(backoffDelayMs(0, undefined, () => 0.999_999)).toBe(375);
    for (let trial = 0; trial < 100; trial += 1) {
      const delay = backoffDelayMs(2, { base_delay_ms: 100, max_delay_ms: 8_000 });
      expect(delay).toBeGreaterThanOrEqual(300);
      expect(delay).toBeLessThanOrEqual(400);
    }
  });

  it("is what retryDelayMs uses when the server asked for nothing", () => {
    const settings = { base_delay_ms: 10, max_delay_ms: 100 };
    expect(retryDelayMs(1, null, settings, () => 0)).toBe(20);
    expect(retryDelayMs(1, headers({ "retry-after-ms": "7" }), settings, () => 0)).toBe(7);
  });
});
