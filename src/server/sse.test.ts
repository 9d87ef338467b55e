import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { streamTurnEvents } from "./sse.js";

/** Events the way an instant turn emits them: each a promise job after the last, never a wait. */
async function* instantEvents(count: number): AsyncGenerator<{ type: string; index: number }> {
  for (let index = 1; index <= count; index++) {
    await Promise.resolve();
    yield { type: "text_delta", index };
  }
}

/** The response body's chunks as the client reads them, with the events they held. */
async function readChunks(response: Response): Promise<{ chunks: number; events: number[] }> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let chunks = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks++;
    text += decoder.decode(value, { stream: true });
  }
  const events = [...text.matchAll(/"index":(\d+)/g)].map((match) => Number(match[1]));
  return { chunks, events };
}

describe("turn events over SSE", () => {
  it("writes what arrives before the event loop turns as one chunk, every event in order", async () => {
    let ended = 0;
    const app = new Hono().get("/", (c) =>
      streamTurnEvents(c, { type: "turn_start", index: 0 }, instantEvents(60), {
        onDisconnect: () => {},
        onEnd: () => {
          ended++;
        },
        onError: (error) => {
          throw error;
        },
      }),
    );
    const { chunks, events } = await readChunks(await app.request("/"));
    expect(events).toEqual(Array.from({ length: 61 }, (_, index) => index));
    // One write per event was 61 chunks; the burst is one, with at most the first event before it.
    expect(chunks).toBeLessThanOrEqual(2);
    expect(ended).toBe(1);
  });

  it("still writes events that arrive with waits between them as they come", async () => {
    // Each event is made only once the client has read the one before, after a macrotask (a
    // wait, not a promise job): a server holding events back would never see the next. Timed
    // waits instead let a slow client read two events as one chunk on a loaded machine.
    let read = 0;
    const waiting: { wake: (() => void) | null } = { wake: null };
    async function* eventsAfterReads() {
      for (let index = 1; index <= 3; index++) {
        await new Promise<void>((resolve) => {
          if (read >= index) resolve();
          else waiting.wake = resolve;
        });
        await new Promise((resolve) => setTimeout(resolve, 1));
        yield { type: "text_delta", index };
      }
    }
    const app = new Hono().get("/", (c) =>
      streamTurnEvents(c, { type: "turn_start", index: 0 }, eventsAfterReads(), {
        onDisconnect: () => {},
        onEnd: () => {},
        onError: (error) => {
          throw error;
        },
      }),
    );
    const response = await app.request("/");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const chunks: number[][] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      const events = [...text.matchAll(/"index":(\d+)/g)].map((match) => Number(match[1]));
      chunks.push(events);
      read += events.length;
      waiting.wake?.();
    }
    expect(chunks).toEqual([[0], [1], [2], [3]]);
  });
});
