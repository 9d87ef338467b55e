import { afterEach, describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { TokenRequiredError } from "./http-errors.js";
import { startServer } from "./start-server.js";
import { rawRequest, startTestServer, type TestServer } from "./test-fixtures.js";

const TOKEN = "test-token-0123456789abcdef";

/** A request without the fixture's token: the raw face a stranger on this machine sees. */
function anonymous(lab: TestServer, path: string, headers: Record<string, string> = {}) {
  return fetch(new URL(path, lab.url), { headers, redirect: "manual" });
}

describe("the access token", () => {
  let lab: TestServer | undefined;
  afterEach(async () => {
    await lab?.close();
    lab = undefined;
  });

  it("is made by default (192 random bits, URL-safe), and every /api route needs it, health included", async () => {
    lab = await startTestServer();
    const token = lab.server.token ?? "";
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(lab.server.browserUrl).toBe(`${lab.url}?token=${token}`);
    for (const path of ["/api/health", "/api/sessions", "/api/openapi.json", "/api/missing"]) {
      const response = await anonymous(lab, path);
      expect(response.status, path).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(await response.json()).toMatchObject({
        error: { code: "unauthorized", message: expect.stringMatching(/\?token=.*Bearer/) },
      });
    }
    expect((await lab.api("/api/health")).status).toBe(200);
    // Each start makes its own.
    const other = await startTestServer();
    try {
      expect(other.server.token).not.toBe(token);
    } finally {
      await other.close();
    }
  });

  it("refuses every wrong token, by header, cookie or address, and never echoes it", async () => {
    lab = await startTestServer({ token: TOKEN });
    const cookieName = `agent_lab_token_${new URL(lab.url).port}`;
    const wrong = [
      "wrong-token-0123456789abcdef",
      `${TOKEN}x`,
      TOKEN.slice(0, -1),
      `${TOKEN.slice(0, -1)}F`,
      "",
      "ü".repeat(TOKEN.length),
    ];
    for (const guess of wrong) {
      for (const headers of [
        { authorization: `Bearer ${guess}` },
        { cookie: `${cookieName}=${encodeURIComponent(guess)}` },
      ]) {
        const response = await anonymous(lab, "/api/sessions", headers);
        expect(response.status, JSON.stringify(headers)).toBe(401);
        expect(await response.text()).not.toContain(TOKEN);
      }
      const page = await anonymous(lab, `/?token=${encodeURIComponent(guess)}`);
      expect(page.headers.get("set-cookie"), guess).toBeNull();
    }
    for (const headers of [
      { authorization: `Basic ${TOKEN}` },
      // Another port's cookie (another lab on 127.0.0.1) is not this one's.
      { cookie: `agent_lab_token_1=${TOKEN}` },
      // The address form is for pages only: API clients send the header.
      {},
    ]) {
      const response = await anonymous(lab, `/api/sessions?token=${TOKEN}`, headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
    }
    expect(
      (await anonymous(lab, "/api/sessions", { authorization: `bearer ${TOKEN}` })).status,
    ).toBe(200);
    expect(lab.logs.join("\n")).not.toContain(TOKEN);
  });

  it("trades ?token= on a page address for an HttpOnly, SameSite=Strict cookie and a redirect without it", async () => {
    lab = await startTestServer({ token: TOKEN });
    const port = new URL(lab.url).port;
    const exchange = await anonymous(lab, `/sessions/abc?tab=usage&token=${TOKEN}`);
    expect(exchange.status).toBe(302);
    expect(exchange.headers.get("location")).toBe("/sessions/abc?tab=usage");
    expect(exchange.headers.get("cache-control")).toBe("no-store");
    const cookie = exchange.headers.get("set-cookie") ?? "";
    expect(cookie).toBe(`agent_lab_token_${port}=${TOKEN}; Path=/; HttpOnly; SameSite=Strict`);
    const pair = cookie.split(";")[0] ?? "";
    const withCookie = await anonymous(lab, "/api/sessions", { cookie: `other=1; ${pair}` });
    expect(withCookie.status).toBe(200);
    expect((await anonymous(lab, `/?token=${TOKEN}`)).headers.get("location")).toBe("/");
    // The redirect stays on this server whatever the path.
    const sneaky = await rawRequest(lab.url, {
      path: `//evil.example/x?token=${TOKEN}`,
      headers: { host: new URL(lab.url).host },
    });
    expect(sneaky.status).toBe(302);
    expect(sneaky.headers.location).toBe("/evil.example/x");
    // A wrong token is not traded: the UI loads (here: the not-built page) and says so.
    expect((await anonymous(lab, "/?token=nope")).status).toBe(503);
    // The cookie also carries a chosen token holding characters a cookie cannot.
    const odd = await startTestServer({ token: "semi;colon,comma=0123456789" });
    try {
      const set = await anonymous(
        odd,
        `/?token=${encodeURIComponent("semi;colon,comma=0123456789")}`,
      );
      const oddPair = (set.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      expect((await anonymous(odd, "/api/health", { cookie: oddPair })).status).toBe(200);
    } finally {
      await odd.close();
    }
  });

  it("token: false opens the lab on loopback only; a chosen token must be strong", async () => {
    lab = await startTestServer({ token: false });
    expect(lab.server.token).toBeNull();
    expect(lab.server.browserUrl).toBe(lab.url);
    expect((await anonymous(lab, "/api/sessions")).status).toBe(200);
    expect((await anonymous(lab, `/?token=${TOKEN}`)).headers.get("set-cookie")).toBeNull();

    const store = new SqliteSessionStore(":memory:");
    try {
      for (const host of ["0.0.0.0", "::", "192.168.1.10"]) {
        await expect(startServer({ store, host, port: 0, token: false })).rejects.toThrow(
          TokenRequiredError,
        );
      }
      await expect(startServer({ store, host: "0.0.0.0", port: 0, token: false })).rejects.toThrow(
        /refusing to listen on 0\.0\.0\.0 without a token.*--no-token is for 127\.0\.0\.1 only/,
      );
      await expect(startServer({ store, port: 0, token: "short" })).rejects.toThrow(
        /at least 16 characters/,
      );
      // Beyond loopback without a chosen token: one is made, as on loopback.
      const server = await startServer({ store, host: "0.0.0.0", port: 0 });
      try {
        const url = `http://127.0.0.1:${server.port}/api/health`;
        expect((await fetch(url)).status).toBe(401);
        const authorized = await fetch(url, {
          headers: { authorization: `Bearer ${server.token}` },
        });
        expect(authorized.status).toBe(200);
      } finally {
        await server.close();
      }
    } finally {
      store.close();
    }
  });

  it("leaves the UI's files open (they hold no data) and still refuses foreign Hosts", async () => {
    lab = await startTestServer({ token: TOKEN });
    expect((await anonymous(lab, "/")).status).toBe(503);
    const rebinding = await rawRequest(lab.url, {
      path: `/?token=${TOKEN}`,
      headers: { host: "evil.example" },
    });
    expect(rebinding.status).toBe(403);
    expect(rebinding.headers["set-cookie"]).toBeUndefined();
  });
});
