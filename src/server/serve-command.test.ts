import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
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

/** The address serve printed (with `?token=…` when it made the token). */
async function runningUrl(run: Run): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const match =
      /Agent Lab is running at (http:\/\/127\.0\.0\.1:\d+\/\S*) \(simulated model by default; Ctrl-C to stop\)/.exec(
        run.stdout(),
      );
    if (match?.[1]) return match[1];
    if (Date.now() > deadline || run.child.exitCode !== null) {
      throw new Error(`serve did not start:\n${run.stdout()}\n${run.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The token in a printed address. */
function tokenOf(url: string): string {
  const token = new URL(url).searchParams.get("token");
  if (!token) throw new Error(`no token in ${url}`);
  return token;
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
      expect(running.stdout()).toContain(`\nDatabase ${database}\n`);
      const authorization = `Bearer ${tokenOf(url)}`;
      expect(
        (await fetch(new URL("/api/health", url), { headers: { authorization } })).status,
      ).toBe(200);
      const created = await fetch(new URL("/api/sessions", url), {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
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

  it("bound to every interface, prints a loopback address a browser can open, not 0.0.0.0", async () => {
    running = serve(["--db", database, "serve", "--host", "0.0.0.0", "--port", "0"]);
    const url = await runningUrl(running); // http://127.0.0.1:PORT/?token=…
    const { port } = new URL(url);
    expect(running.stdout()).toContain(`Listening on every interface (0.0.0.0, port ${port})\n`);
    expect(running.stdout()).toContain(`Database ${database}\n`);
    expect(running.stdout()).not.toMatch(/http:\/\/0\.0\.0\.0/);
    const opened = await fetch(url, { redirect: "manual" });
    expect(opened.status).toBe(302);
    const cookie = (opened.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect((await fetch(new URL("/api/sessions", url), { headers: { cookie } })).status).toBe(200);
    running.child.kill("SIGTERM");
    expect(await running.exit).toBe(0);
  });

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
    expect(new URL(url).search).toBe("");
    expect(running.stdout()).toMatch(
      /Open http:\/\/127\.0\.0\.1:\d+\/\?token=<your token> once: the browser keeps it in a cookie\. API clients send the header Authorization: Bearer <your token>/,
    );
    expect(running.stdout() + running.stderr()).not.toContain(token);
  });

  it("makes a token by default: the API refuses a request without it, and the printed address's token opens it", async () => {
    running = serve(["--db", database, "serve", "--port", "0"]);
    const url = await runningUrl(running);
    const token = tokenOf(url);
    expect(token).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(running.stdout()).toMatch(
      /Open that address once: the browser keeps the token in a cookie/,
    );
    for (const path of ["/api/health", "/api/sessions"]) {
      const refused = await fetch(new URL(path, url));
      expect(refused.status, path).toBe(401);
      expect(await refused.json()).toMatchObject({ error: { code: "unauthorized" } });
    }
    // One character changed (the token ends in "x" one time in 64: then the wrong one is "y").
    const wrong = await fetch(new URL("/api/sessions", url), {
      headers: { authorization: `Bearer ${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}` },
    });
    expect(wrong.status).toBe(401);
    // The printed address, as a browser opens it: a cookie, and the same page without the token.
    const opened = await fetch(url, { redirect: "manual" });
    expect(opened.status).toBe(302);
    expect(opened.headers.get("location")).toBe("/");
    const cookie = (opened.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const listed = await fetch(new URL("/api/sessions", url), { headers: { cookie } });
    expect(listed.status).toBe(200);
    running.child.kill("SIGTERM");
    expect(await running.exit).toBe(0);
  });

  it("--no-token opens the lab to local users, on loopback only", async () => {
    running = serve(["--db", database, "serve", "--port", "0", "--no-token"], {
      AGENT_LAB_TOKEN: "env-token-0123456789abcdef",
    });
    const url = await runningUrl(running);
    expect(new URL(url).search).toBe("");
    expect(running.stdout()).toMatch(
      /No token \(--no-token\): every user and program on this machine can use this lab/,
    );
    expect((await fetch(new URL("/api/sessions", url))).status).toBe(200);
    running.child.kill("SIGTERM");
    expect(await running.exit).toBe(0);

    const open = serve([
      "--db",
      database,
      "serve",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--no-token",
    ]);
    expect(await open.exit).toBe(1);
    expect(open.stderr()).toMatch(
      /^agent-lab: refusing to listen on 0\.0\.0\.0 without a token.*--no-token is for 127\.0\.0\.1 only/,
    );
    expect(open.stdout()).toBe("");
  });

  it("offers the suites of the lab config's suites_dirs and of --suites; refuses a missing folder", async () => {
    const suite = (name: string) =>
      `name: ${name}\nscenarios:\n  - id: hello\n    category: simple\n    turns:\n      - user: hi\n        expect: { no_tools: true }\n`;
    mkdirSync(join(directory.path, "configured"));
    mkdirSync(join(directory.path, "flagged"));
    writeFileSync(join(directory.path, "configured", "a.yaml"), suite("from-config"));
    writeFileSync(join(directory.path, "flagged", "b.yaml"), suite("from-flag"));
    writeFileSync(join(directory.path, "agent-lab.yaml"), "suites_dirs: [configured]\n");
    running = serve([
      "--db",
      database,
      "serve",
      "--port",
      "0",
      "--suites",
      join(directory.path, "flagged"),
    ]);
    const url = await runningUrl(running);
    const listed = await fetch(new URL("/api/suites", url), {
      headers: { authorization: `Bearer ${tokenOf(url)}` },
    });
    const { suites } = (await listed.json()) as { suites: { name: string; file: string }[] };
    expect(suites.map((item) => item.name)).toStrictEqual([
      "bundled",
      "mcp-everything",
      "from-config",
      "from-flag",
    ]);
    expect(suites[2]?.file).toBe(join(directory.path, "configured", "a.yaml"));
    running.child.kill("SIGTERM");
    expect(await running.exit).toBe(0);

    const missing = serve(["--db", database, "serve", "--port", "0", "--suites", "no-such-dir"]);
    expect(await missing.exit).toBe(1);
    expect(missing.stderr()).toBe("agent-lab: --suites: not a folder: no-such-dir\n");
    writeFileSync(join(directory.path, "agent-lab.yaml"), "suites_dirs: [gone]\n");
    const configured = serve(["--db", database, "serve", "--port", "0"]);
    expect(await configured.exit).toBe(1);
    expect(configured.stderr()).toMatch(/agent-lab\.yaml: suites_dirs: not a folder: .*gone\n$/);
  });

  it("refuses a bad port with one clear line", async () => {
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
    expect(help.stdout()).toMatch(/--no-token/);
    expect(help.stdout()).toMatch(/\$ agent-lab serve --port 0/);
  });
});
