import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionRecord } from "../domain/records.js";
import { SESSION_EXPORT_VERSION, type SessionExport } from "../domain/session-export.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { createApp } from "./app.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

describe("HTTP API: export and import", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  async function runTurn(id: string, message: string) {
    const response = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message },
    });
    await response.text();
  }

  /** What may differ between two exports of the same session: ids and the export time. */
  function comparable(document: SessionExport) {
    return {
      ...document,
      exported_at: "*",
      session: { ...document.session, id: "*" },
      messages: document.messages.map((m) => ({ ...m, id: 0, session_id: "*" })),
      audit: document.audit.map((a) => ({ ...a, id: 0, session_id: "*" })),
      usage: { ...document.usage, calls: document.usage.calls.map((c) => ({ ...c, id: 0 })) },
    };
  }

  it("export → import → export round-trips a session over HTTP", async () => {
    const id = lab.store.createSession({
      title: "to export",
      // The ticket is filed unasked: this test is about the round trip, not approvals.
      config: { tool_invocation_mode: "dual_agent", approvals: { mock_ticket: false } },
    });
    await runTurn(id, "search for agent lab and file a ticket about flaky tests");
    await runTurn(id, "thanks");

    const exported = await lab.api(`/api/sessions/${id}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toMatch(/^application\/json/);
    expect(exported.headers.get("content-disposition")).toBe(
      `attachment; filename="agent-lab-session-${id}.json"`,
    );
    const document = (await exported.json()) as SessionExport;
    expect(document).toMatchObject({
      format: "agent-lab.session",
      version: SESSION_EXPORT_VERSION,
    });
    expect(document.turns).toHaveLength(2);

    // The original still exists: the document's own id is taken.
    const clash = await lab.api("/api/import", { method: "POST", json: document });
    expect(clash.status).toBe(409);
    expect(await clash.json()).toMatchObject({ error: { code: "session_exists" } });

    const imported = await lab.api("/api/import?session_id=copy", {
      method: "POST",
      json: document,
    });
    expect(imported.status).toBe(201);
    const { session } = (await imported.json()) as { session: SessionRecord };
    expect(session).toMatchObject({ id: "copy", title: "to export" });
    const again = (await (await lab.api("/api/sessions/copy/export")).json()) as SessionExport;
    expect(comparable(again)).toStrictEqual(comparable(document));

    // Moving a session: delete it, import it back under its own id.
    expect((await lab.api(`/api/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    const restored = await lab.api("/api/import", { method: "POST", json: document });
    expect(restored.status).toBe(201);
    expect(((await restored.json()) as { session: SessionRecord }).session.id).toBe(id);
  });

  it("refuses a bad document with 400 naming the field, storing nothing", async () => {
    const id = lab.store.createSession({ title: "x", config: {} });
    const document = (await (await lab.api(`/api/sessions/${id}/export`)).json()) as Record<
      string,
      unknown
    >;
    const post = (json: unknown, query = "?session_id=new") =>
      lab.api(`/api/import${query}`, { method: "POST", json });
    const bad = await post({ ...document, turns: [{ turn_index: 0 }] });
    expect(bad.status).toBe(400);
    const { error } = (await bad.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("invalid_input");
    expect(error.message).toMatch(/turns\.0\.turn_index/);
    expect(error.message).toMatch(/turns\.0\.user_message/);
    const secret = await post({
      ...document,
      session: { ...(document.session as object), config: { api_key: "sk-live-1234" } },
    });
    expect(secret.status).toBe(400);
    const secretText = await secret.text();
    expect(secretText).toMatch(/session\.config\.api_key/);
    expect(secretText).not.toContain("sk-live-1234");
    const badQuery = await post(document, "?session_id=");
    expect(badQuery.status).toBe(400);
    expect(await badQuery.text()).toMatch(/query: session_id/);
    expect(lab.store.getSession("new")).toBeNull();
    expect(lab.store.listSessions()).toHaveLength(1);
  });
});

describe("OpenAPI document", () => {
  it("is OpenAPI 3.1 and describes exactly the app's API routes", async () => {
    const store = new SqliteSessionStore(":memory:");
    const app = createApp({ store });
    const response = await app.request("/api/openapi.json", { headers: { host: "localhost" } });
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe("3.1.0");

    const METHODS = ["get", "post", "put", "patch", "delete"];
    const routes = new Set(
      app.routes
        .filter((route) => route.path.startsWith("/api") && route.method !== "ALL")
        .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`),
    );
    const documented = new Set(
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => METHODS.includes(key))
          .map((method) => `${method} ${path}`),
      ),
    );
    expect(routes.size).toBeGreaterThanOrEqual(13);
    expect([...documented].sort()).toStrictEqual([...routes].sort());

    // Every reference resolves.
    const text = JSON.stringify(document);
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/(\w+)"/g)) {
      expect(document.components.schemas, name).toHaveProperty(name as string);
    }
    store.close();
  });
});
