import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { distDir, repoRoot, temporaryDirectory } from "../../test/paths.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

/**
 * `agent-lab serve` as users run it: the built command in its own process, stopped by a signal.
 * The command is registered on a bare program here, as main.ts does.
 */
const PROGRAM = `
import { Command, CommanderError } from "commander";
const { registerServeCommand } = await import(${JSON.stringify(pathToFileURL(join(distDir, "cli", "commands", "serve.js")).href)});
const { createCommandContext } = await import(${JSON.stringify(pathToFileURL(join(distDir, "cli", "command-context.js")).href)});
const { processIo } = await import(${JSON.stringify(pathToFileURL(join(distDir, "cli", "output.js")).href)});
const context = createCommandContext(processIo());
const program = new Command("agent-lab").option("--db <path>").exitOverride();
registerServeCommand(program, context);
try {
  await program.parseAsync(process.argv.slice(1), { from: "user" });
  process.exitCode = context.exitCode;
} catch (error) {
  if (error instanceof CommanderError) process.exitCode = error.exitCode;
  else { process.stderr.write("agent-lab: " + error.message + "\\n"); process.exitCode = 1; }
}
`;

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function serve(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, ["--input-type=module", "-e", PROGRAM, "--", ...args], {
    cwd: repoRoot,
    env: { ...process.env, AGENT_LAB_TOKEN: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

async function runningUrl(run: Run): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const match =
      /Agent Lab is running at (http:\/\/127\.0\.0\.1:\d+\/) \(simulated model by default; Ctrl-C to stop\)/.exec(
        run.stdout(),
      );
    if (match?.[1]) return match[1];
    if (Date.now() > deadline || run.child.exitCode !== null) {
      throw new Error(`serve did not start:\n${run.stdout()}\n${run.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("agent-lab serve", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let database: string;
  let running: Run | undefined;
  beforeEach(() => {
    directory = temporaryDirectory();
    database = join(directory.path, "lab.sqlite3");
  });
  afterEach(() => {
    if (running?.child.exitCode === null) running.child.kill("SIGKILL");
    running = undefined;
    directory.remove();
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "serves the lab's database on 127.0.0.1 and stops cleanly on %s",
    async (signal) => {
      running = serve(["--db", database, "serve", "--port", "0"]);
      const url = await runningUrl(running);
      expect((await fetch(new URL("/api/health", url))).status).toBe(200);
      const created = await fetch(new URL("/api/sessions", url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "from the server" }),
      });
      expect(created.status).toBe(201);

      running.child.kill(signal);
      expect(await running.exit).toBe(0);
      expect(running.stderr()).toMatch(new RegExp(`${signal}: stopping the server`));
      const store = new SqliteSessionStore(database);
      expect(store.listSessions().map((session) => session.title)).toStrictEqual([
        "from the server",
      ]);
      store.close();
    },
  );

  it("takes the token from $AGENT_LAB_TOKEN and never prints it", async () => {
    const token = "env-token-0123456789abcdef";
    running = serve(["--db", database, "serve", "--port", "0"], { AGENT_LAB_TOKEN: token });
    const url = await runningUrl(running);
    expect((await fetch(new URL("/api/health", url))).status).toBe(401);
    const authorized = await fetch(new URL("/api/health", url), {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(authorized.status).toBe(200);
    running.child.kill("SIGTERM");
    expect(await running.exit).toBe(0);
    expect(running.stdout()).toMatch(
      /Authorization: Bearer <token>; the web UI asks for the token once per tab/,
    );
    expect(running.stdout() + running.stderr()).not.toContain(token);
  });

  it("refuses another address without a token, and a bad port, with one clear line", async () => {
    const open = serve(["--db", database, "serve", "--host", "0.0.0.0", "--port", "0"]);
    expect(await open.exit).toBe(1);
    expect(open.stderr()).toMatch(
      /^agent-lab: refusing to listen on 0\.0\.0\.0 without a token.*Pass --token or set AGENT_LAB_TOKEN/,
    );
    expect(open.stdout()).toBe("");
    const port = serve(["--db", database, "serve", "--port", "http"]);
    expect(await port.exit).toBe(1);
    expect(port.stderr()).toMatch(/^agent-lab: serve: port: /);
  });

  it("--help shows the options and an example", async () => {
    const help = serve(["serve", "--help"]);
    expect(await help.exit).toBe(0);
    expect(help.stdout()).toMatch(/--host <address>/);
    expect(help.stdout()).toMatch(/--port <number>/);
    expect(help.stdout()).toMatch(/--token <token>/);
    expect(help.stdout()).toMatch(/\$ agent-lab serve --port 0/);
  });
});
