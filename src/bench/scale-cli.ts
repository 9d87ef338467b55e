import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Runs the built `agent-lab` command in a child process, as a user would, and reports its peak
 * resident memory: a preloaded module writes the process's VmHWM when it exits. Not
 * `resourceUsage().maxRSS`: Linux carries the forking parent's peak across exec into it, so every
 * child of a large bench process would look at least as large as the bench.
 */

const BIN = fileURLToPath(new URL("../../bin/agent-lab.js", import.meta.url));

const PROBE = `import { readFileSync, writeFileSync } from "node:fs";
process.on("exit", () => {
  const kb = /VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1];
  writeFileSync(process.env.AGENT_LAB_SCALE_RSS_FILE, kb);
});
`;

export interface CliRun {
  exit_code: number;
  stdout: string;
  stderr: string;
  /** Peak resident set size of the child, in bytes. */
  max_rss_bytes: number;
  wall_ms: number;
}

export async function runAgentLab(args: readonly string[]): Promise<CliRun> {
  const folder = mkdtempSync(join(tmpdir(), "agent-lab-scale-cli-"));
  const probe = join(folder, "rss-probe.mjs");
  const rssFile = join(folder, "max-rss");
  writeFileSync(probe, PROBE);
  const started = performance.now();
  try {
    const child = spawn(process.execPath, ["--import", pathToFileURL(probe).href, BIN, ...args], {
      env: { ...process.env, AGENT_LAB_SCALE_RSS_FILE: rssFile, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      // The progress bar redraws itself thousands of times; the tail says how it ended.
      stderr = (stderr + chunk).slice(-4000);
    });
    const exit_code = await new Promise<number>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => resolve(code ?? 1));
    });
    const wall_ms = performance.now() - started;
    const max_rss_bytes = Number(readFileSync(rssFile, "utf8")) * 1024;
    if (exit_code !== 0) {
      throw new Error(
        `agent-lab ${args.join(" ")} exited ${exit_code}: ${stderr.trim().slice(-800)}`,
      );
    }
    return { exit_code, stdout, stderr, max_rss_bytes, wall_ms };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
