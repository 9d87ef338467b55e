import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshLab, runCli, runCliJson, startCli } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const lab = freshLab();

describe("agent-lab usage: how each turn ended", () => {
  it("has a STATUS column, and labels a cancelled turn's usage as counted until the cancel", async () => {
    const config = join(lab.folder, "slow.json");
    writeFileSync(
      config,
      JSON.stringify({
        tool_invocation_mode: "chat_agent_tools",
        chat_agent: { options: { tokens_per_second: 20 } },
      }),
    );
    const first = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--session",
      "s-1",
      "--new",
      "--config",
      config,
      "hi",
    ]);
    expect(first.status).toBe("completed");
    const running = startCli([
      "--db",
      lab.db,
      "run",
      "--approve",
      "all",
      "--session",
      "s-1",
      "search for agent lab and file a ticket about flaky tests",
    ]);
    await running.stdoutContains("Here is");
    running.child.kill("SIGINT");
    expect((await running.result).status).toBe(130);

    const usage = await runCli(["--db", lab.db, "usage", "s-1"]);
    expect(usage.status, usage.stderr).toBe(0);
    const lines = usage.stdout.split("\n");
    const header = lines.find((line) => line.startsWith("TURN")) ?? "";
    expect(header).toMatch(/^TURN\s+STATUS\s+CALLS/);
    expect(lines.find((line) => line.startsWith("1 "))).toMatch(/^1\s+completed\s+\d/);
    expect(lines.find((line) => line.startsWith("2 "))).toMatch(/^2\s+cancelled\s+\d/);
    expect(lines.find((line) => line.startsWith("total"))).toMatch(/^total\s+\d/);
    expect(usage.stdout).toContain(
      "Turn 2 stopped before the end (cancelled): the usage counts the calls made until then",
    );
  });
});
