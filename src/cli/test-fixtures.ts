import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach } from "vitest";
import { repoRoot, temporaryDirectory } from "../../test/paths.js";

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
  /** Resolves with the text once `test` accepts it (e.g. a prompt printed for the n-th time). */
  stdoutMatches(test: (stdout: string) => boolean, what: string): Promise<string>;
  /** Writes to the child's stdin (started with `stdin: "pipe"`). */
  write(text: string): void;
  result: Promise<CliResult>;
}

export interface StartOptions {
  /** "pipe" to write to the CLI's stdin (it is never a terminal); default "ignore". */
  stdin?: "pipe" | "ignore";
}

/** Variables that would make a test depend on the machine it runs on. */
const ISOLATED = ["AGENT_LAB_DB", "OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_DATA_HOME"];

export function startCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  options: StartOptions = {},
): RunningCli {
  const childEnv: Record<string, string | undefined> = { ...process.env };
  for (const name of ISOLATED) delete childEnv[name];
  Object.assign(childEnv, env);
  const child = spawn(process.execPath, [join(repoRoot, "bin/agent-lab.js"), ...args], {
    env: childEnv,
    stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
  });
  // A CLI that exits before reading all its input closes the pipe: not the test's failure.
  child.stdin?.on("error", () => {});
  let stdout = "";
  let stderr = "";
  const watchers: { test: (stdout: string) => boolean; resolve: (text: string) => void }[] = [];
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (text: string) => {
    stdout += text;
    for (const watcher of [...watchers]) {
      if (!watcher.test(stdout)) continue;
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
  const stdoutMatches = (test: (stdout: string) => boolean, what: string) => {
    if (test(stdout)) return Promise.resolve(stdout);
    return new Promise<string>((resolve, reject) => {
      watchers.push({ test, resolve });
      result.then(
        (ended) =>
          reject(
            new Error(
              `the CLI exited (${ended.status}) before printing ${what}:\n${ended.stdout}\n${ended.stderr}`,
            ),
          ),
        reject,
      );
    });
  };
  return {
    child,
    result,
    stdoutMatches,
    stdoutContains: (pattern) =>
      stdoutMatches((text) => text.includes(pattern), JSON.stringify(pattern)),
    write(text) {
      if (!child.stdin) throw new Error('startCli: pass { stdin: "pipe" } to write to stdin');
      child.stdin.write(text);
    },
  };
}

/**
 * Runs the CLI to the end. Asynchronous, so servers in the test process keep answering. `input`
 * is piped to its stdin, which is then closed.
 */
export function runCli(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  input?: string,
): Promise<CliResult> {
  if (input === undefined) return startCli(args, env).result;
  const running = startCli(args, env, { stdin: "pipe" });
  running.child.stdin?.end(input);
  return running.result;
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

/** A test's own folder and the lab database in it (`--db`), fresh for each test. */
export interface TestLab {
  readonly folder: string;
  readonly db: string;
}

/** Call at the top of a test file: each test gets a new folder, removed after it. */
export function freshLab(): TestLab {
  let directory: ReturnType<typeof temporaryDirectory> | null = null;
  const lab = { folder: "", db: "" };
  beforeEach(() => {
    directory = temporaryDirectory();
    lab.folder = directory.path;
    lab.db = join(directory.path, "lab.sqlite3");
  });
  afterEach(() => directory?.remove());
  return lab;
}

/**
 * Call at the top of a test file: `seed` runs once for the whole file, into a template lab, and
 * each call of the returned function copies that lab to `db` and gives `seed`'s result. Seeding
 * goes through the CLI (seconds a process on a busy machine) and a SQLite lab is one file.
 */
export function seededTemplate<Seeded>(
  seed: (db: string) => Promise<Seeded>,
): (db: string) => Promise<Seeded> {
  const folder = temporaryDirectory();
  afterAll(() => folder.remove());
  let template: Promise<{ path: string; seeded: Seeded }> | null = null;
  return async (db) => {
    template ??= (async () => {
      const path = join(folder.path, "seeded.sqlite3");
      return { path, seeded: await seed(path) };
    })();
    // A seed that failed is tried again by the next test, not handed to every one.
    const { path, seeded } = await template.catch((error: unknown) => {
      template = null;
      throw error;
    });
    // Every CLI process closed its store, which checkpoints: the file is the whole database.
    const wal = `${path}-wal`;
    if (existsSync(wal) && statSync(wal).size > 0) {
      throw new Error(`the seeded lab's journal ${wal} is not empty: a process left it open`);
    }
    copyFileSync(path, db);
    // Each test its own copy, as of its database: one that changes it changes no other's.
    return structuredClone(seeded);
  };
}
