import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tappedUpstreamFetch, upstreamFetch } from "./upstream-fetch.js";

/** An upstream that answers by path: a stream in three writes, a 429, a body cut short. */
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    if (request.url === "/large") {
      // Far more than a read holds: the reader falls behind, and the call pauses and resumes.
      response.writeHead(200, { "content-type": "text/event-stream" });
      for (let index = 0; index < LARGE_EVENTS; index++) response.write(largeEvent(index));
      response.end();
      return;
    }
    if (request.url === "/limited") {
      response.writeHead(429, { "content-type": "application/json" });
      response.end('{"error":{"message":"slow down"}}');
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write("data: one\n\n");
    setImmediate(() => {
      response.write("data: two\n\n");
      if (request.url === "/cut") {
        setImmediate(() => response.socket?.destroy());
        return;
      }
      setImmediate(() => response.end("data: [DONE]\n\n"));
    });
  });
});
const largeEvent = (index: number) => `data: ${index} ${"x".repeat(99_990)}\n\n`;
const LARGE_EVENTS = 12;
const LARGE_BODY = Array.from({ length: LARGE_EVENTS }, (_, index) => largeEvent(index)).join("");
let base = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

const decoder = new TextDecoder();

async function readAll(response: Response): Promise<string> {
  let text = "";
  for await (const piece of response.body ?? []) text += decoder.decode(piece, { stream: true });
  return text;
}

function tapInto(heard: string[]) {
  const tap = { bytes: (piece: Uint8Array) => heard.push(decoder.decode(piece)) };
  return tappedUpstreamFetch(tap);
}

describe("tappedUpstreamFetch", () => {
  it("tells the tap of every read of a 2xx body, and the body still gives every byte", async () => {
    const heard: string[] = [];
    const response = await tapInto(heard)(`${base}/stream`, { method: "POST", body: "{}" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const body = await readAll(response);
    expect(body).toBe("data: one\n\ndata: two\n\ndata: [DONE]\n\n");
    expect(heard.join("")).toBe(body);
  });

  it("gives a reader that falls behind a large body every byte, in order, and no empty read", async () => {
    let heard = 0;
    const response = await tappedUpstreamFetch({ bytes: (piece) => (heard += piece.length) })(
      `${base}/large`,
      { method: "POST", body: "{}" },
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    let reads = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Every read carries bytes: an empty one would mean a reader spinning on nothing (undici's
      // dispatcher, tried on 5 December, hands an empty read on resume).
      expect(value.length).toBeGreaterThan(0);
      text += decoder.decode(value, { stream: true });
      reads++;
      // Behind the socket: each read waits a moment, so the queue fills and the call pauses.
      if (reads % 4 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(text).toBe(LARGE_BODY);
    expect(heard).toBe(LARGE_BODY.length);
  });

  it("tells it nothing of an error status, whose body the caller reads as before", async () => {
    const heard: string[] = [];
    const response = await tapInto(heard)(`${base}/limited`, { method: "POST", body: "{}" });
    expect(response.status).toBe(429);
    expect(await response.text()).toBe('{"error":{"message":"slow down"}}');
    expect(heard).toEqual([]);
  });

  it("fails the body read of a connection lost mid-body, after the tap heard what came", async () => {
    const heard: string[] = [];
    const response = await tapInto(heard)(`${base}/cut`, { method: "POST", body: "{}" });
    await expect(readAll(response)).rejects.toThrow("terminated");
    expect(heard.join("")).toBe("data: one\n\ndata: two\n\n");
  });

  it("gives a slow reader every read the tap heard before a lost connection's failure", async () => {
    const heard: string[] = [];
    const response = await tapInto(heard)(`${base}/cut`, { method: "POST", body: "{}" });
    // The connection is lost while nothing reads: what arrived stays queued (or unread in the
    // paused socket, which then the tap has not heard either).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    const failure = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return null;
        text += decoder.decode(value);
      }
    })().catch((error: unknown) => error);
    expect((failure as Error).message).toBe("terminated");
    expect(text).toMatch(/^data: one\n\n/);
    expect(text).toBe(heard.join(""));
  });

  it("is the plain fetch without a tap: same bytes, same failure", async () => {
    const response = await upstreamFetch(`${base}/stream`, { method: "POST", body: "{}" });
    expect(await readAll(response)).toBe("data: one\n\ndata: two\n\ndata: [DONE]\n\n");
    const cut = await upstreamFetch(`${base}/cut`, { method: "POST", body: "{}" });
    await expect(readAll(cut)).rejects.toThrow("terminated");
  });

  it("stops the call when aborted mid-body: the read fails with the abort's reason", async () => {
    const heard: string[] = [];
    const controller = new AbortController();
    const response = await tapInto(heard)(`${base}/stream`, {
      method: "POST",
      body: "{}",
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(decoder.decode((await reader.read()).value)).toBe("data: one\n\n");
    controller.abort(new Error("the client left"));
    const heardBefore = heard.length;
    await expect(reader.read()).rejects.toThrow("the client left");
    // Whatever the upstream would write after the abort reaches no one.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toHaveLength(heardBefore);
  });
});
