import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EVERYTHING_ENTRY } from "../../test/mcp/reference-servers.js";
import { repoRoot, temporaryDirectory } from "../../test/paths.js";
import type { ExperimentReport } from "../domain/experiment.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { runCli } from "./test-fixtures.js";

/** suites/mcp-everything.yaml through `agent-lab bench`, against the real reference server. */

let folder: ReturnType<typeof temporaryDirectory>;
let db: string;

beforeEach(() => {
  folder = temporaryDirectory();
  db = join(folder.path, "lab.sqlite3");
  // The suite's agent-lab.yaml, with the installed server instead of `npx -y`: no network.
  writeFileSync(
    join(folder.path, "agent-lab.yaml"),
    `mcp_servers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_ENTRY)}, stdio]\n`,
  );
});
afterEach(() => folder.remove());

describe("agent-lab bench suites/mcp-everything.yaml", () => {
  it("scores both modes on the sim against server-everything: every run succeeds, right tools, right arguments", async () => {
    const suite = join(repoRoot, "suites/mcp-everything.yaml");
    const out = join(folder.path, "reports");
    const result = await runCli(["--db", db, "bench", suite, "--out", out, "--json"]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as ExperimentReport;
    expect(report.cells.map((cell) => [cell.label, cell.runs, cell.success_rate])).toEqual([
      ["chat_agent_tools · sim", 3, 1],
      ["dual_agent · sim", 3, 1],
    ]);
    for (const run of report.runs) {
      expect(run.score, `${run.cell} ${run.scenario}`).toMatchObject({
        success: true,
        tool_precision: 1,
        tool_recall: 1,
        argument_match: 1,
        failures: [],
      });
    }
    const store = new SqliteSessionStore(db);
    try {
      const echoes = report.runs
        .filter((run) => run.scenario === "echo")
        .flatMap((run) => store.listMessages(run.session_id))
        .filter((message) => message.role === "tool")
        .map((message) => message.content);
      expect(echoes).toEqual([
        JSON.stringify("Echo: hello lab"),
        JSON.stringify("Echo: hello lab"),
      ]);
    } finally {
      store.close();
    }
  });

  it("without the server in agent-lab.yaml the suite fails, naming the missing tools", async () => {
    writeFileSync(join(folder.path, "agent-lab.yaml"), "mcp_servers: {}\n");
    const suite = join(repoRoot, "suites/mcp-everything.yaml");
    const result = await runCli(["--db", db, "bench", suite, "--out", join(folder.path, "r")]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/everything__echo/);
  });
});
