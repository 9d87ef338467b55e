import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upstreamFetch } from "./upstream-fetch.js";

interface Seen {
  url: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const seen: Seen[] = [];
const server = createServer((request, response) => {
  const pieces: Buffer[] = [];
  request.on("data", (piece: Buffer) => pieces.push(piece));
  request.on("end", () => {
    seen.push({
      url: request.url ?? "",
      method: request.method ?? "",
      headers: request.headers,
      body: Buffer.concat(pieces).toString("utf8"),
    });
    response.writeHead(200, { "content-type": "text/plain", "x-request-id": "req_1" });
    response.end("answered");
  });
});
let base = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe("upstreamFetch", () => {
  it("sends a plain record's headers with lower-case names and trimmed values, as fetch would", async () => {
    const response = await upstreamFetch(`${base}/v1/chat/completions?api-version=1`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Padded": " \tvalue\r\n", "x-a": "1" },
      body: '{"model":"m"}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("req_1");
    expect(await response.text()).toBe("answered");
    const request = seen.at(-1) as Seen;
    expect(request.url).toBe("/v1/chat/completions?api-version=1");
    expect(request.method).toBe("POST");
    expect(request.body).toBe('{"model":"m"}');
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-padded"]).toBe("value");
    expect(request.headers["x-a"]).toBe("1");
    expect(request.headers["content-length"]).toBe("13");
  });

  it("takes a Headers object or pairs too, and the same URL again for the next call", async () => {
    for (const headers of [new Headers({ "X-Kind": "headers" }), [["X-Kind", "pairs"]]] as const) {
      const response = await upstreamFetch(`${base}/v1/chat/completions?api-version=1`, {
        method: "POST",
        headers: headers as NonNullable<RequestInit["headers"]>,
        body: "{}",
      });
      await response.text();
    }
    expect(seen.slice(-2).map((request) => request.headers["x-kind"])).toEqual([
      "headers",
      "pairs",
    ]);
    expect(seen.slice(-2).map((request) => request.url)).toEqual([
      "/v1/chat/completions?api-version=1",
      "/v1/chat/completions?api-version=1",
    ]);
  });

  it("refuses a header value fetch would refuse, and an address that is not http(s)", async () => {
    await expect(
      upstreamFetch(`${base}/v1/models`, { headers: { "x-bad": "a\u0000b" } }),
    ).rejects.toThrow(TypeError);
    await expect(upstreamFetch("ftp://127.0.0.1/v1/models")).rejects.toThrow("fetch failed");
  });
});
