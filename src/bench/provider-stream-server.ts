import { createServer } from "node:http";
import {
  chunksOf,
  reasoningStream,
  type StreamLength,
  textStream,
  toolCallStream,
} from "./provider-stream-bodies.js";

/**
 * The benchmark's model endpoint, a script run in its own process so its CPU never counts against
 * the clients. It answers every POST with a pre-rendered stream written at once: the clients' cost
 * per chunk is what is measured, not the server's pacing. Prints its port, exits when stdin closes.
 */
const bodiesOf = (length: StreamLength) => ({
  text: Buffer.from(textStream(chunksOf(length))),
  tool: Buffer.from(toolCallStream(chunksOf(length))),
  reasoning: Buffer.from(reasoningStream(chunksOf(length))),
});
const bodies = { long: bodiesOf("long"), short: bodiesOf("short") };

const server = createServer((request, response) => {
  const body: Buffer[] = [];
  request.on("data", (piece: Buffer) => body.push(piece));
  request.on("end", () => {
    const text = Buffer.concat(body).toString("utf8");
    // The clients say which stream they want in the user message, and how long ("short").
    const kind = text.includes('"tools"')
      ? "tool"
      : text.includes("think hard")
        ? "reasoning"
        : "text";
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-request-id": "req_bench",
    });
    response.end(bodies[text.includes("short") ? "short" : "long"][kind]);
  });
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") process.stdout.write(`${address.port}\n`);
});
process.on("disconnect", () => server.close());
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
