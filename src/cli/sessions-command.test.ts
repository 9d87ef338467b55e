import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import type { SessionPage } from "../domain/session-query.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { runCli, runCliJson, stderrLines } from "./test-fixtures.js";

/** Issue 12: `agent-lab sessions` a page at a time, with the list's filters. */
let folder: ReturnType<typeof temporaryDirectory>;
let db: string;
const ids: string[] = [];

beforeAll(() => {
  folder = temporaryDirectory();
  db = join(folder.path, "lab.sqlite3");
  const store = new SqliteSessionStore(db);
  for (let index = 0; index < 5; index++) {
    ids.push(
      store.createSession({
        title: `Nightly ${index % 2 === 0 ? "flaky" : "green"} ${index}`,
        config: {
          tool_invocation_mode: index === 0 ? "chat_agent_tools" : "dual_agent",
          chat_agent: { model: index === 1 ? "openai:gpt-4.1-mini" : "sim" },
          tags: index < 2 ? ["nightly"] : [],
          ...(index === 4 ? { experiment: { id: "exp-9" } } : {}),
        },
      }),
    );
  }
  store.startTurn(ids[2] as string, { turn_index: 1, user_message: "go" });
  store.completeTurn(ids[2] as string, { turn_index: 1, wall_time_ms: 1, status: "failed" });
  store.close();
});
afterAll(() => folder.remove());

describe("agent-lab sessions: pages and filters", () => {
  it("pages with --limit and --cursor; --json carries next_cursor, the table a hint", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const args: string[] = ["--db", db, "sessions", "--include-experiments", "--limit", "2"];
      if (cursor !== null) args.push("--cursor", cursor);
      const page: SessionPage = await runCliJson<SessionPage>(args);
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.sessions.map((session) => session.id));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(new Set(seen)).toStrictEqual(new Set(ids));
    expect(seen).toHaveLength(5);

    const first = await runCli(["--db", db, "sessions", "--include-experiments", "--limit", "2"]);
    expect(first.status).toBe(0);
    const hint = first.stdout.trim().split("\n").at(-1) ?? "";
    const next = /--cursor (\S+)/.exec(hint)?.[1];
    expect(hint).toMatch(/^More sessions: add --cursor \S+ \(with the same filters\)/);
    const second = await runCliJson<SessionPage>([
      "--db",
      db,
      "sessions",
      "--include-experiments",
      "--limit",
      "2",
      "--cursor",
      next as string,
    ]);
    expect(second.sessions.map((session) => session.id)).toStrictEqual(seen.slice(2, 4));
    const last = await runCli(["--db", db, "sessions", "--limit", "50"]);
    expect(last.stdout).not.toMatch(/More sessions/);
  });

  it("filters by search, mode, model, tag, status, experiment and dates", async () => {
    const titles = async (...flags: string[]) =>
      (
        await runCliJson<SessionPage>(["--db", db, "sessions", "--include-experiments", ...flags])
      ).sessions
        .map((session) => session.title)
        .sort();
    expect(await titles("--search", "FLAKY")).toStrictEqual([
      "Nightly flaky 0",
      "Nightly flaky 2",
      "Nightly flaky 4",
    ]);
    expect(await titles("--mode", "chat_agent_tools")).toStrictEqual(["Nightly flaky 0"]);
    expect(await titles("--model", "openai:gpt-4.1-mini")).toStrictEqual(["Nightly green 1"]);
    expect(await titles("--tag", "nightly")).toStrictEqual(["Nightly flaky 0", "Nightly green 1"]);
    expect(await titles("--status", "failed")).toStrictEqual(["Nightly flaky 2"]);
    expect(await titles("--experiment", "exp-9")).toStrictEqual(["Nightly flaky 4"]);
    expect(await titles("--tag", "nightly", "--search", "green")).toStrictEqual([
      "Nightly green 1",
    ]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await titles("--since", today, "--until", today)).toHaveLength(5);
    expect(await titles("--until", "2000-01-01")).toStrictEqual([]);
    const none = await runCli(["--db", db, "sessions", "--tag", "absent"]);
    expect(none.stdout).toBe("No sessions match.\n");
  });

  it("hides experiment runs unless --include-experiments or --experiment asks for them", async () => {
    const titles = async (...flags: string[]) =>
      (await runCliJson<SessionPage>(["--db", db, "sessions", ...flags])).sessions
        .map((session) => session.title)
        .sort();
    expect(await titles()).toStrictEqual([
      "Nightly flaky 0",
      "Nightly flaky 2",
      "Nightly green 1",
      "Nightly green 3",
    ]);
    expect(await titles("--include-experiments")).toHaveLength(5);
    expect(await titles("--experiment", "exp-9")).toStrictEqual(["Nightly flaky 4"]);
    // Only a hidden run matches: the empty list says how to see it.
    const hidden = await runCli(["--db", db, "sessions", "--search", "flaky 4"]);
    expect(hidden.stdout).toBe(
      "No sessions match outside experiments; add --include-experiments to list experiment runs.\n",
    );
    const table = await runCli([
      "--db",
      db,
      "sessions",
      "--search",
      "flaky 4",
      "--include-experiments",
    ]);
    expect(table.stdout).toMatch(/Nightly flaky 4/);
  });

  it("refuses a bad flag value with one line naming the flag", async () => {
    const refused = async (flags: string[], message: RegExp) => {
      const result = await runCli(["--db", db, "sessions", ...flags]);
      expect(result.status).toBe(1);
      const lines = stderrLines(result);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
    };
    await refused(["--limit", "0"], /^agent-lab: sessions: --limit: limit must be at least 1/);
    await refused(["--limit", "9999"], /--limit: limit is at most 500/);
    await refused(["--status", "done"], /--status: /);
    await refused(["--since", "last week"], /--since: /);
    await refused(["--search", "  "], /--search: /);
    await refused(["--cursor", "bogus"], /^agent-lab: cursor: not a cursor of this list/);
  });
});
