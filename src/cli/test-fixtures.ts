import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "../../test/paths.js";

/** Test helpers: the built CLI (`node bin/agent-lab.js`) as a child process, as users run it. */

export interface CliResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  child: ChildProcess;
  /** Resolves with the text once stdout contains `pattern`. */
  stdoutContains(pattern: string): Promise<string>;
  result: Promise<CliResult>;
}

/** Variables that would make a test depend on the machine it runs on. */
const ISOLATED = ["AGENT_LAB_DB", "OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_DATA_HOME"];

export function startCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): RunningCli {
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const name of ISOLATED) delete childEnv[name];
  Object.assign(childEnv, env);
  const child = spawn(process.execPath, [join(repoRoot, "bin/agent-lab.js"), ...args], {
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const watchers: { pattern: string; resolve: (text: string) => void }[] = [];
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (text: string) => {
    stdout += text;
    for (const watcher of [...watchers]) {
      if (!stdout.includes(watcher.pattern)) continue;
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve(stdout);
    }
  });
  child.stderr?.on("data", (text: string) => {
    stderr += text;
  });
  const result = new Promise<CliResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
  return {
    child,
    result,
    stdoutContains(pattern) {
      if (stdout.includes(pattern)) return Promise.resolve(stdout);
      return new Promise((resolve, reject) => {
        watchers.push({ pattern, resolve });
        result.then(
          (ended) =>
            reject(
              new Error(
                `the CLI exited (${ended.status}) before printing ${JSON.stringify(pattern)}:\n${ended.stdout}\n${ended.stderr}`,
              ),
            ),
          reject,
        );
      });
    },
  };
}

/** Runs the CLI to the end. Asynchronous, so servers in the test process keep answering. */
export function runCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return startCli(args, env).result;
}

/** Runs a `--json` command, expecting success, and parses what it printed. */
export async function runCliJson<Value = unknown>(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<Value> {
  const result = await runCli([...args, "--json"], env);
  if (result.status !== 0) {
    throw new Error(`agent-lab ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as Value;
}

/** The lines a command wrote to stderr. */
export function stderrLines(result: CliResult): string[] {
  return result.stderr.split("\n").filter((line) => line.length > 0);
}
