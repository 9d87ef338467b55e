import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envReference } from "../../../test/mcp/reference-servers.js";
import {
  HttpToolDefinition as Definition,
  type HttpToolDefinition,
} from "../../domain/tool-sources.js";
import { ToolRegistry } from "../registry.js";
import type { Tool } from "../tool.js";
import { createHttpToolSource } from "./index.js";

/** A loopback server whose routes play each behaviour an HTTP tool endpoint can have. */
interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}
const received: Received[] = [];
const sockets = new Set<Socket>();
let server: Server;
let base = "";
/** Bytes the oversize route managed to write before the client stopped reading. */
let oversizeWritten = 0;

function route(request: IncomingMessage, response: ServerResponse, body: string): void {
  switch (request.url) {
    case "/json":
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ got: JSON.parse(body), ok: true }));
      return;
    case "/echo-auth":
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ you_sent: request.headers.authorization }));
      return;
    case "/text":
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("plain answer");
      return;
    case "/fail":
      response.writeHead(503, { "content-type": "text/plain" });
      response.end(`backend down: ${"detail ".repeat(200)}`);
      return;
    case "/redirect":
      response.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" });
      response.end();
      return;
    case "/slow":
      // Never answers; the client must give up.
      return;
    case "/stall-body":
      // Headers and the start of a body, then nothing: the read must give up too.
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"partial":');
      return;
    case "/huge": {
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, "a");
      const write = () => {
        // Writes up to 50 MB, slowed by backpressure: a client that stops reading stops it.
        while (oversizeWritten < 50 * 1024 * 1024) {
          oversizeWritten += chunk.length;
          if (!response.write(chunk)) {
            response.once("drain", write);
            return;
          }
        }
        response.end();
      };
      write();
      return;
    }
    default:
      response.writeHead(404);
      response.end();
  }
}

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (text: string) => {
      body += text;
    });
    request.on("end", () => {
      received.push({ path: request.url ?? "", headers: request.headers, body });
      route(request, response, body);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  server.close();
});

function definition(path: string, extra: Partial<HttpToolDefinition> = {}): HttpToolDefinition {
  return Definition.parse({ name: "lookup", url: `${base}${path}`, ...extra });
}

async function onlyTool(
  input: HttpToolDefinition,
  env: Record<string, string> = {},
): Promise<ToolRegistry> {
  const tools: Tool[] = await createHttpToolSource([input], { env }).tools();
  return new ToolRegistry(tools);
}

describe("HTTP tools", () => {
  it("POSTs the arguments as JSON and returns the parsed JSON answer", async () => {
    const registry = await onlyTool(
      definition("/json", {
        parameters: { type: "object", properties: { q: { type: "string" } } },
        requires_approval: true,
      }),
    );
    expect(registry.get("lookup")).toMatchObject({ source: "http", requires_approval: true });
    const outcome = await registry.run("lookup", { q: "weather" });
    expect(outcome).toMatchObject({ ok: true, value: { got: { q: "weather" }, ok: true } });
    const request = received.at(-1);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request?.body ?? "")).toEqual({ q: "weather" });
  });

  it("returns a text answer as text", async () => {
    const outcome = await (await onlyTool(definition("/text"))).run("lookup", {});
    expect(outcome).toMatchObject({ ok: true, value: "plain answer" });
  });

  it("resolves env-referencing header values at call time, and refuses a literal secret or a missing variable", async () => {
    const registry = await onlyTool(
      definition("/json", {
        headers: { Authorization: `Bearer ${envReference("LAB_HTTP_TOKEN")}` },
      }),
      { LAB_HTTP_TOKEN: "tok-123456789" },
    );
    expect((await registry.run("lookup", {})).ok).toBe(true);
    expect(received.at(-1)?.headers.authorization).toBe("Bearer tok-123456789");
    // An endpoint that echoes the credential back does not get it into the record.
    const echoing = await onlyTool(
      definition("/echo-auth", {
        headers: { Authorization: `Bearer ${envReference("LAB_HTTP_TOKEN")}` },
      }),
      { LAB_HTTP_TOKEN: "tok-123456789" },
    );
    const echoed = await echoing.run("lookup", {});
    expect(echoed).toMatchObject({ ok: true, value: { you_sent: "Bearer [redacted]" } });

    const unset = await onlyTool(
      definition("/json", { headers: { "X-Key": envReference("LAB_UNSET_HTTP_KEY") } }),
    );
    expect(await unset.run("lookup", {})).toMatchObject({
      ok: false,
      error:
        "HTTP tool lookup: headers.X-Key: the environment variable LAB_UNSET_HTTP_KEY is not set",
    });

    expect(() =>
      createHttpToolSource([definition("/json", { headers: { Authorization: "Bearer abc" } })]),
    ).toThrow(
      /http_tools\[0\]: headers\.Authorization: header values name an environment variable holding a key/,
    );
    expect(() =>
      createHttpToolSource([Definition.parse({ name: "k", url: `${base}/json?api_key=abc` })]),
    ).toThrow(/http_tools\[0\]: url: a URL must not carry a credential/);
  });

  it("a non-2xx answer is an error result with the status and a short excerpt", async () => {
    const outcome = await (await onlyTool(definition("/fail"))).run("lookup", {});
    expect(outcome.ok).toBe(false);
    const error = outcome.ok ? "" : outcome.error;
    expect(error).toMatch(/^HTTP tool lookup: HTTP 503 Service Unavailable: backend down: detail/);
    expect(error.length).toBeLessThan(400);
    const redirect = await (await onlyTool(definition("/redirect"))).run("lookup", {});
    expect(redirect).toMatchObject({ ok: false });
    expect(redirect.ok ? "" : redirect.error).toContain(
      "HTTP 302 Found (redirects are not followed)",
    );
  });

  it("an endpoint that never answers times out", async () => {
    const outcome = await (await onlyTool(definition("/slow", { timeout_ms: 300 }))).run(
      "lookup",
      {},
    );
    expect(outcome).toMatchObject({ ok: false, kind: "timeout" });
    expect(outcome.ok ? "" : outcome.error).toMatch(/300 ms/);
  });

  it("an endpoint that stops mid-body times out", async () => {
    const outcome = await (await onlyTool(definition("/stall-body", { timeout_ms: 300 }))).run(
      "lookup",
      {},
    );
    expect(outcome).toMatchObject({ ok: false, kind: "timeout" });
    expect(outcome.ok ? "" : outcome.error).toMatch(/300 ms/);
  });

  it("an oversize answer is cut at max_response_bytes, said so, and the rest is never read", async () => {
    const outcome = await (
      await onlyTool(definition("/huge", { max_response_bytes: 100_000 }))
    ).run("lookup", {});
    expect(outcome.ok).toBe(true);
    const value = outcome.ok ? String(outcome.value) : "";
    expect(value.startsWith("a".repeat(100_000))).toBe(true);
    expect(value.slice(100_000)).toBe(
      "…[cut: response over max_response_bytes (100000); the rest was not read]",
    );
    // The server was stopped by backpressure far short of its 50 MB.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(oversizeWritten).toBeLessThan(10 * 1024 * 1024);
  });

  it("refuses duplicate names and an unreachable endpoint gives an error result", async () => {
    expect(() => createHttpToolSource([definition("/json"), definition("/text")])).toThrow(
      "http_tools[1]: duplicate HTTP tool name lookup",
    );
    const closed = await onlyTool(
      Definition.parse({ name: "lookup", url: "http://127.0.0.1:1/x" }),
    );
    const outcome = await closed.run("lookup", {});
    expect(outcome).toMatchObject({ ok: false });
    expect(outcome.ok ? "" : outcome.error).toMatch(
      /^HTTP tool lookup: request failed: fetch failed/,
    );
  });
});
