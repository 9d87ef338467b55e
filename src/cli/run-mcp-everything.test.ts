import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EVERYTHING_ENTRY } from "../../test/mcp/reference-servers.js";
import { temporaryDirectory } from "../../test/paths.js";
import type { ToolInvocationMode } from "../domain/session-config.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { runCliJson } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

/**
 * The sim model against the real MCP reference server, from the CLI as a user runs it: the
 * server is defined in agent-lab.yaml beside the database and selected by name in --config.
 */

const ASK = 'call everything__echo with {"message":"hello lab"}';

let folder: ReturnType<typeof temporaryDirectory>;
let db: string;
let marker: string;

beforeEach(() => {
  folder = temporaryDirectory();
  db = join(folder.path, "lab.sqlite3");
  marker = `agent-lab-test-${process.pid}-${Math.random().toString(36).slice(2)}`;
  // The server gets a variable only this test sets, so its process can be found by it.
  writeFileSync(
    join(folder.path, "agent-lab.yaml"),
    [
      "mcp_servers:",
      "  everything:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]`,
      "    env:",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the lab config's env reference
      "      AGENT_LAB_TEST_MARKER: ${AGENT_LAB_TEST_MARKER}",
      "",
    ].join("\n"),
  );
  writeFileSync(join(folder.path, "config.json"), JSON.stringify({ tools: ["everything__echo"] }));
});
afterEach(() => folder.remove());

/** Ids of the live processes whose environment holds `AGENT_LAB_TEST_MARKER=<marker>`. */
function processesMarked(value: string): number[] {
  const needle = `AGENT_LAB_TEST_MARKER=${value}\0`;
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "latin1").includes(needle);
      } catch {
        return false; // gone meanwhile, or not ours
      }
    })
    .map(Number);
}

describe.each<ToolInvocationMode>(["chat_agent_tools", "dual_agent"])(
  "agent-lab run with server-everything over stdio (%s)",
  (mode) => {
    it("the sim calls everything__echo, the real server's answer is stored, and no server outlives the command", async () => {
      const args = ["--db", db, "run", "--config", join(folder.path, "config.json")];
      const report = await runCliJson<TurnReport>(
        [...args, "--approve", "all", "--mode", mode, ASK],
        { AGENT_LAB_TEST_MARKER: marker },
      );
      expect(report).toMatchObject({ status: "completed", mode, error: null });
      expect(report.tool_calls).toMatchObject([
        { name: "everything__echo", arguments: { message: "hello lab" }, ok: true },
      ]);
      expect(report.answer).toContain('everything__echo returned "Echo: hello lab"');
      const store = new SqliteSessionStore(db);
      try {
        const tool = store.listMessages(report.session_id).filter((m) => m.role === "tool");
        expect(tool.map((m) => m.content)).toEqual([JSON.stringify("Echo: hello lab")]);
      } finally {
        store.close();
      }
      expect(processesMarked(marker)).toEqual([]);
    });
  },
);

describe("agent-lab run with server-everything: what it is not", () => {
  it("a tool the session did not select is not called: the sim says it is not offered", async () => {
    const report = await runCliJson<TurnReport>(["--db", db, "run", "--approve", "all", ASK], {
      AGENT_LAB_TEST_MARKER: marker,
    });
    expect(report.tool_calls).toEqual([]);
    expect(report.answer).toMatch(/^I can't call everything__echo: no tool by that name/);
  });

  it("the process scan finds a process carrying the marker (so an empty scan means something)", async () => {
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], {
      env: { ...process.env, AGENT_LAB_TEST_MARKER: marker },
      stdio: "ignore",
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(processesMarked(marker)).toContain(child.pid);
    } finally {
      child.kill();
      await once(child, "exit");
    }
  });
});
