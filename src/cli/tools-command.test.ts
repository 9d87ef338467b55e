import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createToolProvider, type ToolListing } from "../composition/tool-provider.js";
import { freshLab, runCli, runCliJson } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const lab = freshLab();

/** A server nobody selects: starting it would fail, so a passing run shows it never started. */
const UNUSED_SERVER = "mcp_servers:\n  never:\n    command: /nonexistent/agent-lab-test-server\n";

describe("agent-lab tools", () => {
  it("--json lists every tool with its source, schema and approval, as the lab offers them", async () => {
    const listed = await runCliJson<{ lab_config: string | null; tools: ToolListing[] }>([
      "--db",
      lab.db,
      "tools",
    ]);
    expect(listed.lab_config).toBeNull();
    expect(listed.tools).toStrictEqual(await createToolProvider().list());
    expect(listed.tools.map((tool) => [tool.name, tool.source])).toEqual([
      ["mock_search", "builtin"],
      ["mock_ticket", "builtin"],
    ]);
    const text = await runCli(["--db", lab.db, "tools"]);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/^NAME\s+SOURCE\s+APPROVAL\s+DESCRIPTION\nmock_search\s+builtin/);
  });

  it("a bad lab config file is refused naming file:line:col and the field", async () => {
    const file = join(lab.folder, "bad.yaml");
    writeFileSync(file, "mcp_servers:\n  files:\n    comand: npx\n");
    const viaFlag = await runCli(["--db", lab.db, "--lab-config", file, "tools"]);
    expect(viaFlag.status).not.toBe(0);
    expect(viaFlag.stderr).toContain(`${file}:3:5: mcp_servers.files.comand: unknown key`);
    const viaEnv = await runCli(["--db", lab.db, "run", "hello"], { AGENT_LAB_CONFIG: file });
    expect(viaEnv.status).not.toBe(0);
    expect(viaEnv.stderr).toContain(`${file}:3:5`);
    const missing = await runCli([
      "--db",
      lab.db,
      "--lab-config",
      join(lab.folder, "no.yaml"),
      "tools",
    ]);
    expect(missing.stderr).toMatch(/lab config file not found: .*no\.yaml/);
  });

  it("agent-lab.yaml beside the database is read, and a server no session selects never starts", async () => {
    writeFileSync(join(lab.folder, "agent-lab.yaml"), UNUSED_SERVER);
    const report = await runCliJson<TurnReport>(["--db", lab.db, "run", "search for agent lab"]);
    expect(report.status).toBe("completed");
    // Selecting its tools does start it, and its failure is named.
    const config = join(lab.folder, "config.json");
    writeFileSync(config, JSON.stringify({ tools: ["never__*"] }));
    const selected = await runCli(["--db", lab.db, "run", "--config", config, "hello"]);
    expect(selected.status).not.toBe(0);
    expect(selected.stderr).toMatch(/MCP server never/);
  });

  it("a server of agent-lab.yaml that does not start: one line naming it, exit 1, in both outputs", async () => {
    writeFileSync(join(lab.folder, "agent-lab.yaml"), UNUSED_SERVER);
    for (const args of [["tools"], ["tools", "--json"]]) {
      const result = await runCli(["--db", lab.db, ...args]);
      expect(result.status).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(
        /^agent-lab: MCP server never did not start: spawn \/nonexistent\/agent-lab-test-server ENOENT\n$/,
      );
    }
  });

  it("a session config file that defines an MCP server or an HTTP tool is refused, naming the field", async () => {
    const config = join(lab.folder, "config.json");
    writeFileSync(config, JSON.stringify({ mcp_servers: { x: { command: "sh" } } }));
    const refused = await runCli(["--db", lab.db, "run", "--config", config, "hello"]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(
      /mcp_servers: an MCP server is defined only in the lab config file/,
    );
    writeFileSync(config, JSON.stringify({ tools: [{ name: "x", url: "http://127.0.0.1:9" }] }));
    const url = await runCli(["--db", lab.db, "run", "--config", config, "hello"]);
    expect(url.stderr).toMatch(/tools\.0: a tool with a command or url/);
  });
});
