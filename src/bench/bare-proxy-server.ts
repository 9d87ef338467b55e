import http from "node:http";

/**
 * The floor of any gateway: a bare node:http proxy that forwards the request body to the upstream
 * on a kept-alive connection and pipes the answer's bytes back, recording nothing. The gateway
 * bench streams through it beside the lab, so the lab's added time to first token can be read
 * against what one more local hop costs on the same machine in the same run. Run with `fork`;
 * sends `{url}` when listening, exits when the parent disconnects.
 */
const [upstreamUrl] = process.argv.slice(2);
if (!upstreamUrl || !process.send) {
  console.error("usage: fork bare-proxy-server UPSTREAM_BASE_URL");
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true });
const server = http.createServer((request, response) => {
  const pieces: Buffer[] = [];
  request.on("data", (piece: Buffer) => pieces.push(piece));
  request.on("end", () => {
    const body = Buffer.concat(pieces);
    const upstream = http.request(
      `${upstreamUrl}/chat/completions`,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": body.length },
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, {
          "content-type": answer.headers["content-type"] ?? "text/event-stream",
        });
        answer.pipe(response);
      },
    );
    upstream.on("error", () => response.destroy());
    upstream.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") {
    process.send?.({ url: `http://127.0.0.1:${address.port}/v1` });
  }
});
process.on("disconnect", () => process.exit(0));
