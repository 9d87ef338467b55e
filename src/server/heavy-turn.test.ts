import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, turnEventsOf } from "./test-fixtures.js";

/**
 * One heavy turn must not freeze the server: a message of 300,000 characters without spaces once
 * took the tokenizer 48 s on the event loop, and every request, health included, waited for it.
 * The bound is generous (the benchmark measures the real figure, `npm run bench -- server`).
 */

describe("HTTP API: a heavy turn does not block other requests", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  it.each(["chat_agent_tools", "dual_agent"] as const)(
    "answers /api/health within a second while a 300,000-character no-space turn runs (%s)",
    async (mode) => {
      const id = lab.store.createSession({ title: "t", config: { tool_invocation_mode: mode } });
      let turnOver = false;
      const turn = lab
        .api(`/api/sessions/${id}/turns`, {
          method: "POST",
          json: { message: "x".repeat(300_000) },
        })
        .then((response) => response.text())
        .finally(() => {
          turnOver = true;
        });

      const latencies: number[] = [];
      do {
        const start = performance.now();
        const health = await lab.api("/api/health");
        expect(health.status).toBe(200);
        await health.arrayBuffer();
        latencies.push(performance.now() - start);
      } while (!turnOver);

      const events = turnEventsOf(await turn);
      expect(events.at(-1)).toMatchObject({ type: "turn_end", status: "completed" });
      expect(Math.max(...latencies)).toBeLessThan(1_000);
      const usage = events.filter((event) => event.type === "usage");
      expect(usage.length).toBeGreaterThan(0);
      // The 300,000 characters are counted by the byte estimate, and the usage says so.
      expect(usage[0]).toMatchObject({ estimated: true });
      expect(usage[0]?.type === "usage" ? usage[0].usage.prompt_tokens : 0).toBeGreaterThanOrEqual(
        75_000,
      );
    },
    120_000,
  );
});
