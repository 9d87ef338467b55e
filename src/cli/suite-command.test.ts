import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../test/paths.js";
import type { ExperimentReport } from "../domain/experiment.js";
import { freshLab, runCli, stderrLines } from "./test-fixtures.js";

const lab = freshLab();
const FIXTURES = join(repoRoot, "test/fixtures/bfcl");

describe("agent-lab suite import bfcl", () => {
  it("writes a suite from BFCL's files that agent-lab bench runs in both modes", async () => {
    const out = join(lab.folder, "bfcl.yaml");
    const imported = await runCli([
      "suite",
      "import",
      "bfcl",
      FIXTURES,
      "--limit",
      "1",
      "--out",
      out,
    ]);
    expect(imported.status).toBe(0);
    expect(imported.stdout).toContain(`Wrote ${out}: 13 scenarios (irrelevance 1,`);
    expect(imported.stdout).toContain(
      "; 3 cases and 1 whole file skipped (listed above), 11 over --limit",
    );
    expect(stderrLines(imported)).toEqual([
      `${FIXTURES}/BFCL_v4_exec_simple.json:1: skipped exec_simple_0: unknown BFCL category "exec_simple"; importable: simple_python, simple_java, simple_javascript, multiple, parallel, parallel_multiple, irrelevance, live_simple, live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, live_relevance`,
      `${FIXTURES}/BFCL_v4_format_sensitivity.json: skipped the whole file: format_sensitivity re-runs other categories' cases under varied prompt formats; import those categories instead`,
      `${FIXTURES}/BFCL_v4_multi_turn_base.json:1: skipped multi_turn_base_0: multi_turn: it needs BFCL's stateful backends (file system, trading, travel…)`,
      `${FIXTURES}/BFCL_v4_multi_turn_base.json:2: skipped multi_turn_base_1: multi_turn: it needs BFCL's stateful backends (file system, trading, travel…)`,
    ]);
    expect(readFileSync(out, "utf8")).toMatch(/^# Imported from BFCL/);

    const bench = await runCli(["--db", lab.db, "bench", out, "--repetitions", "1", "--json"]);
    expect(bench.status).toBe(0);
    const report = JSON.parse(bench.stdout) as ExperimentReport;
    expect(report.suite).toBe("bfcl");
    expect(report.cells.map((cell) => cell.label)).toEqual([
      "chat_agent_tools · sim",
      "dual_agent · sim",
    ]);
    expect(report.cells.map((cell) => cell.runs)).toEqual([13, 13]);
    expect(new Set(report.runs.map((run) => run.scenario)).size).toBe(13);
    expect(report.runs.map((run) => run.category)).toContain("parallel_multiple");
    expect(report.runs.map((run) => run.category)).toContain("relevance");
  });

  it("takes files and --categories, and lists a group of skipped cases on one line", async () => {
    const out = join(lab.folder, "some.yaml");
    const longFile = join(lab.folder, "BFCL_v4_multi_turn_base.json");
    const line = (index: number) =>
      JSON.stringify({
        id: `multi_turn_base_${index}`,
        question: [[{ role: "user", content: "x" }]],
      });
    writeFileSync(longFile, `${[0, 1, 2, 3, 4].map(line).join("\n")}\n`);
    const result = await runCli([
      "suite",
      "import",
      "bfcl",
      join(FIXTURES, "BFCL_v4_simple_java.json"),
      join(FIXTURES, "BFCL_v4_irrelevance.json"),
      longFile,
      "--categories",
      "simple_java, irrelevance",
      "--name",
      "java and irrelevance",
      "--out",
      out,
    ]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(
      `Wrote ${out}: 4 scenarios (simple_java 2, irrelevance 2); 5 not among --categories`,
    );
    expect(readFileSync(out, "utf8")).toContain("name: java and irrelevance\n");

    const all = await runCli(["suite", "import", "bfcl", longFile, "--out", out, "--force"]);
    expect(all.status).toBe(1);
    expect(stderrLines(all)).toEqual([
      `${longFile}:1-5: skipped 5 cases (multi_turn_base_0 … multi_turn_base_4): multi_turn: it needs BFCL's stateful backends (file system, trading, travel…)`,
      "agent-lab: nothing to import from 1 file: 5 cases skipped, 0 not among --categories; no suite written",
    ]);
  });

  it("refuses bad flags, an existing file without --force, and a case without its answer", async () => {
    const out = join(lab.folder, "bfcl.yaml");
    const noOut = await runCli(["suite", "import", "bfcl", FIXTURES]);
    expect(noOut.status).toBe(1);
    expect(noOut.stderr).toContain("required option '--out <file>' not specified");

    const badLimit = await runCli([
      "suite",
      "import",
      "bfcl",
      FIXTURES,
      "--limit",
      "0",
      "--out",
      out,
    ]);
    expect(badLimit.status).toBe(1);
    expect(badLimit.stderr).toBe("agent-lab: suite import bfcl: limit: must be at least 1\n");
    expect(existsSync(out)).toBe(false);

    writeFileSync(out, "keep me");
    const exists = await runCli(["suite", "import", "bfcl", FIXTURES, "--out", out]);
    expect(exists.status).toBe(1);
    expect(exists.stderr).toBe(`agent-lab: ${out} already exists; pass --force to overwrite it\n`);
    expect(readFileSync(out, "utf8")).toBe("keep me");

    const lone = join(lab.folder, "BFCL_v4_parallel.json");
    writeFileSync(lone, readFileSync(join(FIXTURES, "BFCL_v4_parallel.json")));
    const noAnswer = await runCli(["suite", "import", "bfcl", lone, "--out", out, "--force"]);
    expect(noAnswer.status).toBe(1);
    expect(noAnswer.stderr).toBe(
      `agent-lab: ${lone}:1: case parallel_0 needs its possible answer, and ${join(lab.folder, "possible_answer/BFCL_v4_parallel.json")} does not exist (give the folder with --answers)\n`,
    );
    expect(readFileSync(out, "utf8")).toBe("keep me");
  });
});
