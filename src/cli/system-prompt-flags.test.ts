import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../domain/records.js";
import { freshLab, runCli, runCliJson } from "./test-fixtures.js";
import type { TurnReport } from "./turn-report.js";

const lab = freshLab();

async function sentPrompt(sessionId: string): Promise<string | undefined> {
  const shown = await runCliJson<{ audit: AuditRecord[] }>(["--db", lab.db, "show", sessionId]);
  const start = shown.audit.find((entry) => entry.event === "turn_start");
  return (start?.details as { system_prompt?: string } | undefined)?.system_prompt;
}

describe("run --system / --system-file", () => {
  it("sets the chat agent's system prompt, recorded as sent", async () => {
    const report = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--mode",
      "chat_agent_tools",
      "--system",
      "Be brief.",
      "hello",
    ]);
    expect(await sentPrompt(report.session_id)).toBe("Be brief.");

    const file = join(lab.folder, "prompt.md");
    writeFileSync(file, "You triage tickets.\nNever file one unasked.\n");
    const dual = await runCliJson<TurnReport>([
      "--db",
      lab.db,
      "run",
      "--system-file",
      file,
      "hello",
    ]);
    const sent = await sentPrompt(dual.session_id);
    expect(sent?.startsWith("You triage tickets.\nNever file one unasked.\n\n\n")).toBe(true);
    expect(sent).toContain("mock_ticket");
  });

  it("refuses both flags, an empty prompt and a missing file, before creating anything", async () => {
    const both = await runCli(["--db", lab.db, "run", "--system", "a", "--system-file", "b", "hi"]);
    expect(both.status).not.toBe(0);
    expect(both.stderr).toMatch(/--system.*cannot be used with.*--system-file|not both/);
    const empty = await runCli(["--db", lab.db, "run", "--system", "  ", "hi"]);
    expect(empty.stderr).toMatch(/--system: the system prompt is empty/);
    const missing = await runCli([
      "--db",
      lab.db,
      "run",
      "--system-file",
      join(lab.folder, "no"),
      "hi",
    ]);
    expect(missing.stderr).toMatch(/--system-file .*no: no such file/);
    const sessions = await runCli(["--db", lab.db, "sessions", "--json"]);
    expect(sessions.stdout.trim() === "" || JSON.parse(sessions.stdout).sessions.length === 0).toBe(
      true,
    );
  });
});
