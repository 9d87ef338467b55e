import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { distDir, temporaryDirectory } from "../../test/paths.js";

/**
 * The benchmarks are the evidence for the lab's performance targets, and no test ran them: the
 * server bench still expected the whole session list in one answer long after the API was paged,
 * so `npm run bench` stopped there and the parts after it never ran. These runs take each part's
 * smallest settings and check only that it gets to its figures; whether a target is met is the
 * benchmarks' business, never a test's (a test machine is busy with other tests).
 */

const TITLES: Record<string, string> = {
  store: "SqliteSessionStore",
  bfcl: "BFCL import and bench",
  server: "HTTP server",
  tools: "Tools",
  otel: "OpenTelemetry export (npm run bench -- otel)",
  gateway: "Gateway",
  runtime: "Runtime",
  providers: "Providers",
  scale: "Scale",
};

const SMALLEST = {
  AGENT_LAB_STORE_SIZE: "tiny",
  AGENT_LAB_SERVER_SESSIONS: "1000",
  AGENT_LAB_BENCH_WARMUP: "50",
  AGENT_LAB_BENCH_ROUND_TURNS: "100",
  AGENT_LAB_BFCL_CASES: "200",
  AGENT_LAB_GATEWAY_ROUNDS: "2",
  AGENT_LAB_GATEWAY_WARMUP: "1",
  AGENT_LAB_BENCH_TURNS: "100",
  AGENT_LAB_PROVIDER_ROUNDS: "2",
  AGENT_LAB_PROVIDER_CALLS: "1",
  AGENT_LAB_SCALE: "tiny",
  // The web UI and the bench command's memory have browser and CLI tests of their own.
  AGENT_LAB_SCALE_PARTS: "sessions,experiments,usage",
};

const folders: { remove(): void }[] = [];
/** Each run's process group: a run that timed out or failed must not go on beside the suite. */
const groups: number[] = [];
afterEach(() => {
  for (const group of groups.splice(0)) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // Ended already.
    }
  }
  for (const folder of folders.splice(0)) folder.remove();
});

function runBench(
  parts: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Every file a part makes (its databases, the scale fixtures) goes in a folder removed after.
  const scratch = temporaryDirectory();
  folders.push(scratch);
  // A developer's NODE_OPTIONS (--trace-warnings, a loader) would change what the parts print.
  const { NODE_OPTIONS: _options, ...env } = process.env;
  const child = spawn(process.execPath, [join(distDir, "bench", "main.js"), ...parts], {
    env: {
      ...env,
      ...SMALLEST,
      TMPDIR: scratch.path,
      AGENT_LAB_SCALE_CACHE: scratch.path,
      NO_COLOR: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
    // A group of its own, so the parts' children are stopped with it.
    detached: true,
  });
  if (child.pid !== undefined) groups.push(child.pid);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The figures printed under a part's title: the lines up to the next blank line. */
function figuresOf(stdout: string, title: string): string[] {
  const lines = stdout.split("\n");
  const start = lines.indexOf(title);
  if (start === -1) return [];
  const section: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line === "") break;
    section.push(line);
  }
  return section.filter((line) => /^ {2}(ok {2}|MISS) /.test(line));
}

describe("npm run bench, each part on its smallest settings", () => {
  it.each([
    [["store", "providers", "runtime", "server"]],
    [["tools", "bfcl", "gateway", "otel", "scale"]],
  ])("%j runs to its figures and its summary", { timeout: 240_000 }, async (parts) => {
    const { code, stdout, stderr } = await runBench(parts);
    // A part that throws prints its error; Node's warnings are no failure.
    const printed = stderr.replace(/^\(node:\d+\) \w*Warning: .*$/gm, "");
    expect(printed, stdout.slice(-2000)).not.toMatch(/^\w*Error\b/m);
    expect(code, stderr.slice(-2000)).toBe(0);
    for (const part of parts) {
      const title = TITLES[part] as string;
      expect(
        figuresOf(stdout, title).length,
        `${part}: no figures under "${title}"`,
      ).toBeGreaterThan(0);
    }
    expect(stdout.trimEnd()).toMatch(/\n(all targets met|\d+ target\(s\) missed: .+)$/);
  });

  it("names an unknown part and runs none", async () => {
    const { code, stdout, stderr } = await runBench(["server", "no-such-part"]);
    expect(code).toBe(2);
    expect(stderr).toContain("unknown benchmark(s): no-such-part");
    expect(stdout).not.toContain("server benchmark");
  });
});
