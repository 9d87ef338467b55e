import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { gatewayClientKey, requestGuards } from "./security.js";
import { startServer } from "./start-server.js";
import { rawRequest, startTestServer, type TestServer } from "./test-fixtures.js";

describe("server security", () => {
  let lab: TestServer | undefined;
  afterEach(async () => {
    await lab?.close();
    lab = undefined;
  });

  const hostOf = (url: string) => new URL(url).host;
  const portOf = (url: string) => new URL(url).port;

  it("binds 127.0.0.1 by default and answers only to its own Host names (DNS rebinding)", async () => {
    lab = await startTestServer();
    expect(lab.server.host).toBe("127.0.0.1");
    expect(lab.url).toBe(`http://127.0.0.1:${portOf(lab.url)}/`);
    const get = (host: string) =>
      rawRequest(lab?.url ?? "", { path: "/api/health", headers: { host, ...lab?.auth } });
    for (const host of ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"]) {
      expect((await get(`${host}:${portOf(lab.url)}`)).status, host).toBe(200);
    }
    for (const host of [
      "evil.example",
      `evil.example:${portOf(lab.url)}`,
      "localhost:1",
      `127.0.0.1.evil.example:${portOf(lab.url)}`,
    ]) {
      const response = await get(host);
      expect(response.status, host).toBe(403);
      expect(JSON.parse(response.body)).toMatchObject({ error: { code: "forbidden" } });
    }
    // The UI is guarded too: a rebinding page must not load it either.
    expect(
      (await rawRequest(lab.url, { path: "/", headers: { host: "evil.example" } })).status,
    ).toBe(403);
  });

  it("refuses a state-changing request from a foreign Origin (403); same-origin passes", async () => {
    lab = await startTestServer();
    const create = (origin: string | undefined) =>
      lab?.api("/api/sessions", {
        method: "POST",
        json: { title: "x" },
        ...(origin ? { headers: { origin } } : {}),
      });
    for (const origin of ["http://evil.example", "null", `http://localhost:${portOf(lab.url)}`]) {
      const response = await create(origin);
      expect(response?.status, origin).toBe(403);
      expect(await response?.json()).toMatchObject({ error: { code: "forbidden" } });
    }
    expect((await create(`http://${hostOf(lab.url)}`))?.status).toBe(201);
    expect((await create(undefined))?.status).toBe(201);
    const id = lab.store.listSessions()[0]?.id ?? "";
    const foreignDelete = await lab.api(`/api/sessions/${id}`, {
      method: "DELETE",
      headers: { origin: "http://evil.example" },
    });
    expect(foreignDelete.status).toBe(403);
    // Reading needs no Origin check: the browser keeps a foreign page from reading the answer.
    const read = await lab.api("/api/sessions", { headers: { origin: "http://evil.example" } });
    expect(read.status).toBe(200);
    expect(read.headers.get("access-control-allow-origin")).toBeNull();
    expect(lab.store.listSessions()).toHaveLength(2);
  });

  it("accepts only JSON bodies (415)", async () => {
    lab = await startTestServer();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const response = await lab.api("/api/sessions", {
        method: "POST",
        headers: { "content-type": type },
        body: JSON.stringify({ title: "x" }),
      });
      expect(response.status, type).toBe(415);
      expect(await response.json()).toMatchObject({ error: { code: "unsupported_media_type" } });
    }
    const untyped = await rawRequest(lab.url, {
      method: "POST",
      path: "/api/import",
      headers: { host: hostOf(lab.url), ...lab.auth },
      body: "{}",
    });
    expect(untyped.status).toBe(415);
    const withCharset = await lab.api("/api/sessions", {
      method: "POST",
      headers: { "content-type": "Application/JSON; charset=utf-8" },
      body: JSON.stringify({ title: "x" }),
    });
    expect(withCharset.status).toBe(201);
    expect(lab.store.listSessions()).toHaveLength(1);
  });

  it("refuses bodies over the limit (413), by Content-Length and by the bytes actually sent", async () => {
    lab = await startTestServer({ maxBodyBytes: 1024, maxImportBytes: 4096 });
    const big = JSON.stringify({ title: "x".repeat(2000) });
    const declared = await lab.api("/api/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ error: { code: "payload_too_large" } });

    // Chunked, no Content-Length: counted as it arrives.
    const chunked = await rawRequest(lab.url, {
      method: "POST",
      path: "/api/sessions",
      headers: {
        host: hostOf(lab.url),
        ...lab.auth,
        "content-type": "application/json",
        "transfer-encoding": "chunked",
      },
      body: [Buffer.from(big.slice(0, 800)), Buffer.from(big.slice(800))],
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { code: "payload_too_large" } });

    // Imports have their own, larger limit; the ordinary one still holds elsewhere.
    const document = { format: "agent-lab.session", padding: "x".repeat(2000) };
    const imported = await lab.api("/api/import", { method: "POST", json: document });
    expect(imported.status).toBe(400);
    const tooBig = await lab.api("/api/import", {
      method: "POST",
      json: { ...document, padding: "x".repeat(5000) },
    });
    expect(tooBig.status).toBe(413);
    expect(lab.store.listSessions()).toStrictEqual([]);
  });

  it("the default limit is 1 MiB", async () => {
    lab = await startTestServer();
    const response = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "x".repeat(1024 * 1024) },
    });
    expect(response.status).toBe(413);
    const fits = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "x", config: { system_note: "y".repeat(500_000) } },
    });
    expect(fits.status).toBe(201);
  });

  it("refuses a port in use with a clear error", async () => {
    const store = new SqliteSessionStore(":memory:");
    try {
      const busy = await startServer({ store, port: 0 });
      try {
        await expect(startServer({ store, port: busy.port })).rejects.toThrow(
          /already in use.*--port/,
        );
      } finally {
        await busy.close();
      }
    } finally {
      store.close();
    }
  });

  it("sends nosniff, a strict CSP and no framing on every response", async () => {
    lab = await startTestServer();
    for (const path of ["/api/health", "/", "/api/missing"]) {
      const response = await lab.api(path);
      expect(response.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(response.headers.get("x-frame-options"), path).toBe("DENY");
      const policy = response.headers.get("content-security-policy") ?? "";
      for (const directive of [
        "default-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "frame-ancestors 'none'",
      ]) {
        expect(policy, path).toContain(directive);
      }
      expect(response.headers.get("strict-transport-security")).toBeNull();
    }
  });

  describe("the gateway (/v1)", () => {
    const openAIShape = {
      error: {
        message: expect.any(String),
        type: expect.any(String),
        param: null,
        code: expect.anything(),
      },
    };

    it("answers only to its own Host names and refuses foreign origins, in OpenAI's format", async () => {
      lab = await startTestServer();
      const port = portOf(lab.url);
      const get = (host: string) =>
        rawRequest(lab?.url ?? "", { path: "/v1/models", headers: { host, ...lab?.auth } });
      expect((await get(`localhost:${port}`)).status).toBe(200);
      const rebound = await get("evil.example");
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body)).toEqual({
        error: {
          message: expect.stringContaining("Host header"),
          type: "invalid_request_error",
          param: null,
          code: "forbidden",
        },
      });
      const foreign = await lab.api("/v1/chat/completions", {
        method: "POST",
        headers: { origin: "http://evil.example" },
        json: { model: "sim", messages: [{ role: "user", content: "hi" }] },
      });
      expect(foreign.status).toBe(403);
      expect(await foreign.json()).toMatchObject(openAIShape);
    });

    it("takes the token as Bearer or X-Agent-Lab-Token; never a cookie or ?token=", async () => {
      lab = await startTestServer();
      const token = lab.server.token ?? "";
      const models = (headers: Record<string, string>, path = "/v1/models") =>
        rawRequest(lab?.url ?? "", {
          path,
          headers: { host: hostOf(lab?.url ?? ""), ...headers },
        });
      expect((await models({ authorization: `Bearer ${token}` })).status).toBe(200);
      expect((await models({ "x-agent-lab-token": token })).status).toBe(200);
      expect(
        (
          await models({
            authorization: "Bearer sk-upstream-key-000000",
            "x-agent-lab-token": token,
          })
        ).status,
      ).toBe(200);
      for (const headers of [
        {},
        { authorization: "Bearer nope-nope-nope-nope" },
        { "x-agent-lab-token": "nope-nope-nope-nope" },
        { cookie: `agent_lab_token_${portOf(lab.url)}=${encodeURIComponent(token)}` },
      ]) {
        const refused = await models(headers);
        expect(refused.status, JSON.stringify(headers)).toBe(401);
        expect(refused.headers["www-authenticate"]).toBe('Bearer realm="agent-lab"');
        expect(JSON.parse(refused.body)).toEqual({
          error: {
            message: expect.stringContaining("X-Agent-Lab-Token"),
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        });
      }
      // A page's token exchange is for the UI's pages only.
      const exchange = await models({}, `/v1/models?token=${token}`);
      expect(exchange.status).toBe(401);
      expect(exchange.headers["set-cookie"]).toBeUndefined();
    });

    it("hands a route the client's own key only when it is not the lab token", async () => {
      const token = "gateway-test-token-0123456789";
      const app = new Hono();
      app.use(requestGuards({ token }));
      app.get("/v1/key", (c) => c.json({ key: gatewayClientKey(c) }));
      const keyOf = async (headers: Record<string, string>) => {
        const response = await app.request("/v1/key", {
          headers: { host: "127.0.0.1:4173", ...headers },
        });
        return ((await response.json()) as { key: string | null }).key;
      };
      expect(await keyOf({ authorization: `Bearer ${token}` })).toBeNull();
      expect(
        await keyOf({ authorization: "Bearer sk-client-key-000000", "x-agent-lab-token": token }),
      ).toBe("sk-client-key-000000");
      expect(
        await keyOf({ authorization: `Bearer ${token}`, "x-agent-lab-token": token }),
      ).toBeNull();

      const open = new Hono();
      open.use(requestGuards({}));
      open.get("/v1/key", (c) => c.json({ key: gatewayClientKey(c) }));
      const response = await open.request("/v1/key", {
        headers: { host: "127.0.0.1:4173", authorization: "Bearer sk-client-key-000000" },
      });
      expect(await response.json()).toEqual({ key: "sk-client-key-000000" });
    });

    it("answers JSON bodies only, and unknown /v1 routes with OpenAI's 404 (never the UI)", async () => {
      lab = await startTestServer();
      const plain = await lab.api("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "{}",
      });
      expect(plain.status).toBe(415);
      expect(await plain.json()).toMatchObject(openAIShape);
      for (const method of ["GET", "POST"]) {
        const response = await lab.api("/v1/embeddings", {
          method,
          ...(method === "POST" ? { json: {} } : {}),
        });
        expect(response.status, method).toBe(404);
        expect(await response.json()).toEqual({
          error: {
            message: `no such API route: ${method} /v1/embeddings`,
            type: "invalid_request_error",
            param: null,
            code: null,
          },
        });
        // The security headers survive the rewrite.
        expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      }
    });

    it("needs no token on a --no-token server", async () => {
      lab = await startTestServer({ token: false });
      const response = await fetch(new URL("/v1/models", lab.url));
      expect(response.status).toBe(200);
    });
  });
});
