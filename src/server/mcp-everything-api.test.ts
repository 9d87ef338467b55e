import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EVERYTHING_ENTRY } from "../../test/mcp/reference-servers.js";
import { temporaryDirectory } from "../../test/paths.js";
import { createLabProvidersFor, type LabProviders } from "../composition/lab-providers.js";
import type { TurnEvent } from "../domain/turn-events.js";
import type { ErrorBody } from "./http-errors.js";
import { startTestServer, type TestServer, turnEventsOf } from "./test-fixtures.js";

/**
 * The HTTP API with an agent-lab.yaml, as `agent-lab serve` builds it: a session selects an MCP
 * tool by name, and the sim calls the real reference server in a turn.
 */

const ASK = 'call everything__echo with {"message":"hello lab"}';

let folder: ReturnType<typeof temporaryDirectory>;
let providers: LabProviders;
let lab: TestServer;

async function startWith(labConfig: string): Promise<void> {
  const path = join(folder.path, "agent-lab.yaml");
  writeFileSync(path, labConfig);
  providers = createLabProvidersFor({ flag: path, env: {} });
  lab = await startTestServer({ runTurnDefaults: { providers } });
}

beforeEach(() => {
  folder = temporaryDirectory();
});
afterEach(async () => {
  await lab?.close();
  await providers?.tools.close();
  folder.remove();
});

const EVERYTHING = `mcp_servers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`;
const BROKEN = "mcp_servers:\n  broken:\n    command: /nonexistent/agent-lab-test-server\n";

describe.each(["chat_agent_tools", "dual_agent"] as const)(
  "HTTP API with server-everything over stdio (%s)",
  (mode) => {
    it("POST /api/sessions selects everything__echo; a turn calls the real server and stores its answer", async () => {
      await startWith(EVERYTHING);
      const created = await lab.api("/api/sessions", {
        method: "POST",
        json: { title: "mcp", config: { tool_invocation_mode: mode, tools: ["everything__echo"] } },
      });
      expect(created.status).toBe(201);
      const { session } = (await created.json()) as { session: { id: string } };
      const id = session.id;
      const turn = await lab.api(`/api/sessions/${id}/turns`, {
        method: "POST",
        json: { message: ASK },
      });
      expect(turn.status).toBe(200);
      const events = turnEventsOf(await turn.text());
      const end = events.at(-1) as Extract<TurnEvent, { type: "turn_end" }>;
      expect(end).toMatchObject({ type: "turn_end", status: "completed" });
      const results = events.filter((event) => event.type === "tool_result");
      expect(results).toHaveLength(1);
      const tool = lab.store.listMessages(id).filter((message) => message.role === "tool");
      expect(tool.map((message) => [message.name, message.content])).toEqual([
        ["everything__echo", JSON.stringify("Echo: hello lab")],
      ]);
      const answer = lab.store.listMessages(id).findLast((m) => m.role === "assistant");
      expect(answer?.content).toContain('everything__echo returned "Echo: hello lab"');
    });
  },
);

describe("HTTP API when a tool source of the lab config fails", () => {
  it("GET /api/tools answers 502 tool_source_failed naming the server, not a bare 500", async () => {
    await startWith(BROKEN);
    const response = await lab.api("/api/tools");
    expect(response.status).toBe(502);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("tool_source_failed");
    expect(body.error.message).toMatch(
      /^MCP server broken did not start: .*\/nonexistent\/agent-lab-test-server/,
    );
    // Not a bug of the server: nothing was logged as an unexpected failure.
    expect(lab.logs.join("\n")).not.toMatch(/unexpected failure/);
  });

  it("POST /api/sessions selecting its tools answers the same 502, and stores no session", async () => {
    await startWith(BROKEN);
    const response = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "t", config: { tools: ["broken__anything"] } },
    });
    expect(response.status).toBe(502);
    const body = (await response.json()) as ErrorBody;
    expect(body.error).toMatchObject({ code: "tool_source_failed" });
    expect(body.error.message).toMatch(/MCP server broken did not start/);
    expect(lab.store.listSessions()).toEqual([]);
    // The built-ins need no source: a session without its tools is still accepted.
    const plain = await lab.api("/api/sessions", { method: "POST", json: { title: "t" } });
    expect(plain.status).toBe(201);
  });
});
