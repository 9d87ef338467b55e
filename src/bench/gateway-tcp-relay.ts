import net from "node:net";

/**
 * The least one more local hop can cost: a relay in its own process that splices the client's
 * connection to the upstream's, bytes both ways, parsing no HTTP. The gateway bench streams
 * through it beside the bare node:http proxy (bare-proxy-server.ts), so the two floors can be
 * told apart in the same run: what a hop costs, and what a proxy that reads HTTP adds to it. Run
 * with `fork`; sends `{url}` when listening, exits when the parent disconnects.
 */
const [upstreamUrl] = process.argv.slice(2);
if (!upstreamUrl || !process.send) {
  console.error("usage: fork gateway-tcp-relay UPSTREAM_BASE_URL");
  process.exit(2);
}
const upstream = new URL(upstreamUrl);
const server = net.createServer({ noDelay: true }, (client) => {
  const relay = net.connect({
    host: upstream.hostname,
    // A URL on its scheme's default port has no port of its own.
    port: Number(upstream.port) || (upstream.protocol === "https:" ? 443 : 80),
    noDelay: true,
  });
  client.pipe(relay);
  relay.pipe(client);
  client.on("error", () => relay.destroy());
  relay.on("error", () => client.destroy());
  client.on("close", () => relay.destroy());
  relay.on("close", () => client.destroy());
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") {
    process.send?.({ url: `http://127.0.0.1:${address.port}${upstream.pathname}` });
  }
});
process.on("disconnect", () => process.exit(0));
