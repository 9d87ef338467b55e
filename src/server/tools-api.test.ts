import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToolProvider } from "../composition/tool-provider.js";
import type { ErrorBody } from "./http-errors.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

describe("HTTP API: tools and where they may be defined", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  async function refused(response: Response, field: RegExp): Promise<void> {
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("invalid_input");
    expect(body.error.message).toMatch(field);
  }

  it("GET /api/tools lists what the lab offers, as `agent-lab tools` does", async () => {
    const response = await lab.api("/api/tools");
    expect(response.status).toBe(200);
    expect(await response.json()).toStrictEqual({ tools: await createToolProvider().list() });
  });

  it("POST /api/sessions refuses a config that defines an MCP server or an HTTP tool (400, the field named)", async () => {
    const post = (config: unknown) =>
      lab.api("/api/sessions", { method: "POST", json: { title: "t", config } });
    await refused(
      await post({ mcp_servers: { x: { command: "sh", args: ["-c", "id"] } } }),
      /config\.mcp_servers: an MCP server is defined only in the lab config file/,
    );
    await refused(
      await post({ http_tools: [{ name: "x", url: "http://127.0.0.1:9" }] }),
      /config\.http_tools: an HTTP tool is defined only/,
    );
    await refused(
      await post({ tools: [{ name: "x", url: "http://127.0.0.1:9" }] }),
      /config\.tools\.0: a tool with a command or url/,
    );
    await refused(
      await post({ declared_tools: [{ name: "x", command: "sh", mock: { result: 1 } }] }),
      /config\.declared_tools\.0.*"command"/,
    );
    expect(lab.store.listSessions()).toEqual([]);
  });

  it("POST /api/sessions accepts declared tools and refuses one named like a built-in", async () => {
    const created = await lab.api("/api/sessions", {
      method: "POST",
      json: {
        title: "t",
        config: { declared_tools: [{ name: "lookup", mock: { result: { ok: true } } }] },
      },
    });
    expect(created.status).toBe(201);
    await refused(
      await lab.api("/api/sessions", {
        method: "POST",
        json: {
          title: "t",
          config: { declared_tools: [{ name: "mock_ticket", mock: { result: 1 } }] },
        },
      }),
      /config\.tools: declared tool mock_ticket has the name of a builtin tool/,
    );
  });

  it("POST /api/import refuses a session whose config defines an HTTP tool, storing nothing", async () => {
    const id = lab.store.createSession({ title: "x", config: {} });
    const document = (await (await lab.api(`/api/sessions/${id}/export`)).json()) as {
      session: { config: Record<string, unknown> };
    };
    lab.store.deleteSession(id);
    document.session.config.http_tools = [{ name: "x", url: "http://127.0.0.1:9" }];
    await refused(
      await lab.api("/api/import", { method: "POST", json: document }),
      /session\.config\.http_tools: an HTTP tool is defined only/,
    );
    expect(lab.store.listSessions()).toEqual([]);
  });
});
