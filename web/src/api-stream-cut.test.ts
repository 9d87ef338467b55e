import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, postSse } from "./api.js";

/** A server that sends one event of a stream, then drops the connection, as a stopped lab does. */
let server: Server;
let url = "";
beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write('event: turn_start\ndata: {"type":"turn_start"}\n\n', () => {
      setTimeout(() => response.socket?.destroy(), 20);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/sessions/s/turns`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("an event stream the server breaks off", () => {
  it("delivers what came, then says the lab server's stream broke off", async () => {
    const received: string[] = [];
    const done = postSse(
      url,
      {},
      (message) => received.push(message.event),
      new AbortController().signal,
    );
    await expect(done).rejects.toBeInstanceOf(ApiError);
    await expect(done).rejects.toMatchObject({
      code: "unreachable",
      message: expect.stringMatching(/^the lab server's stream broke off: it may have stopped/),
    });
    expect(received).toStrictEqual(["turn_start"]);
  });

  it("says the lab server did not answer when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const done = postSse(`http://127.0.0.1:${port}/x`, {}, () => {}, new AbortController().signal);
    await expect(done).rejects.toMatchObject({
      code: "unreachable",
      message: expect.stringMatching(/^the lab server did not answer/),
    });
  });
});
