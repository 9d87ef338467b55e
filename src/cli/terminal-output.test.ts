import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  completionStream,
  errorReply,
  FakeOpenAIServer,
  streamReply,
} from "../../test/fake-openai-server.js";
import { temporaryDirectory } from "../../test/paths.js";
import { runCli } from "./test-fixtures.js";

/**
 * Issue 9, point 11: what a model, a tool, a title or an import says reaches the terminal shown,
 * never obeyed. Each sequence below does something to a terminal when printed raw.
 */
const HOSTILE = [
  "\x1b]52;c;cm0gLXJmIH4=\x07", // OSC 52: writes the clipboard
  "\x1b]0;pwned\x07", // sets the window title
  "\x1b[2J\x1b[H", // clears the screen
  "\u009b31m", // C1 CSI: an escape sequence without ESC
  "\u202e", // right-to-left override: reorders what is shown
  "\r", // returns to the line start, to overwrite it
].join("");

/** Characters a terminal acts on; none may be in anything printed. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function expectNoRawControl(text: string, where: string): void {
  expect(RAW_CONTROL.exec(text)?.[0], where).toBeUndefined();
}

describe("terminal output is safe", () => {
  let server: FakeOpenAIServer;
  const directory = temporaryDirectory();
  const db = join(directory.path, "lab.sqlite3");
  afterAll(() => directory.remove());
  beforeEach(async () => {
    server = await FakeOpenAIServer.start();
  });
  afterEach(() => server.close());

  it("run, show, sessions and usage show a model's and a title's control sequences escaped", async () => {
    server.enqueue(streamReply(completionStream({ text: ["Hello ", HOSTILE, " world"] })));
    const model = ["--model", "openai:m", "--event-model", "openai:m", "--base-url"];
    const run = await runCli([
      "--db",
      db,
      "run",
      ...model,
      server.baseUrl,
      "--session",
      "hostile",
      "--new",
      "--title",
      `title ${HOSTILE}`,
      "hi",
    ]);
    expect(run.status, run.stderr).toBe(0);
    expectNoRawControl(run.stdout, "run stdout");
    // Shown, not dropped: the reader sees that something was there.
    expect(run.stdout).toContain("\\x1b]52;c;");
    expect(run.stdout).toContain("\\u202e");

    // An endpoint's error message reaches stderr the same way.
    server.enqueue(errorReply(400, `refused ${HOSTILE}`));
    const failed = await runCli(["--db", db, "run", "--session", "hostile", "again"]);
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toContain("\\x1b[2J");
    expectNoRawControl(failed.stderr, "failed run stderr");

    for (const args of [["show", "hostile"], ["sessions"], ["usage", "hostile"]]) {
      const result = await runCli(["--db", db, ...args]);
      expect(result.status, result.stderr).toBe(0);
      expectNoRawControl(result.stdout + result.stderr, args.join(" "));
    }
    const show = await runCli(["--db", db, "show", "hostile"]);
    expect(show.stdout).toContain("title \\x1b]52");
  });

  it("an imported session's title and messages are shown escaped; --json keeps the exact text", async () => {
    const exported = await runCli(["--db", db, "export", "hostile"]);
    expect(exported.status, exported.stderr).toBe(0);
    const document = JSON.parse(exported.stdout) as { session: { title: string } };
    document.session.title = `imported ${HOSTILE}`;
    const file = join(directory.path, "hostile.json");
    writeFileSync(file, JSON.stringify(document));
    const imported = await runCli(["--db", db, "import", file, "--session-id", "copy"]);
    expect(imported.status, imported.stderr).toBe(0);

    for (const args of [["show", "copy"], ["sessions"]]) {
      const result = await runCli(["--db", db, ...args]);
      expect(result.status, result.stderr).toBe(0);
      expectNoRawControl(result.stdout, args.join(" "));
      expect(result.stdout).toContain("imported \\x1b]52");
    }

    // JSON escapes C0 itself; C1 and bidi controls are escaped too, and the value is unchanged.
    const json = await runCli(["--db", db, "show", "copy", "--json"]);
    expect(json.status, json.stderr).toBe(0);
    expectNoRawControl(json.stdout, "show --json");
    expect((JSON.parse(json.stdout) as { session: { title: string } }).session.title).toBe(
      `imported ${HOSTILE}`,
    );
    expect(readFileSync(file, "utf8")).toContain("\\u001b]52");
  });
});
