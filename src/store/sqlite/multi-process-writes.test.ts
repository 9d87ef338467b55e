import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { distEntryUrl, repoRoot, temporaryDirectory } from "../../../test/paths.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

// Enough writes that the two processes overlap for most of their run, not just at the edges.
const PER_PROCESS = 2000;

function runWriter(
  path: string,
  label: string,
): Promise<{ label: string; sharedRecorded: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [
      join(repoRoot, "test/workers/append-process.mjs"),
      distEntryUrl,
      path,
      "shared-session",
      label,
      String(PER_PROCESS),
    ]);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(JSON.parse(stdout));
      else reject(new Error(`writer ${label} exited ${code}: ${stderr}`));
    });
  });
}

describe("SqliteSessionStore: several processes writing one session", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  it("loses nothing and records each shared metric key exactly once", async () => {
    const path = join(directory.path, "shared.sqlite3");
    const setup = new SqliteSessionStore(path);
    setup.createSession({ title: "shared", config: {}, session_id: "shared-session" });
    setup.startTurn("shared-session", { turn_index: 1, user_message: "go" });
    setup.close();

    const results = await Promise.all([runWriter(path, "alpha"), runWriter(path, "beta")]);

    const store = new SqliteSessionStore(path);
    const usage = store.usageSummary("shared-session");
    const messages = store.listMessages("shared-session");
    const audit = store.listAuditLogs("shared-session");
    const listed = store.listSessions()[0];
    store.close();

    const keys = usage.calls.map((call) => call.metric_key);
    for (const label of ["alpha", "beta"]) {
      expect(keys.filter((key) => key?.startsWith(`${label}:`))).toHaveLength(PER_PROCESS);
    }
    expect(keys.filter((key) => key?.startsWith("shared:"))).toHaveLength(PER_PROCESS);
    expect(new Set(keys).size).toBe(keys.length);
    // Between them the two writers claimed every shared key once.
    expect(results.reduce((sum, result) => sum + result.sharedRecorded, 0)).toBe(PER_PROCESS);
    expect(usage.session.total_tokens).toBe(2 * PER_PROCESS * 2 + PER_PROCESS);
    expect(listed?.total_tokens).toBe(usage.session.total_tokens);
    expect(messages).toHaveLength(2 * (PER_PROCESS / 5) * 2);
    expect(audit).toHaveLength(2 * (PER_PROCESS / 5));
    // Every group stayed together: each tool reply directly follows its assistant call.
    for (let index = 0; index < messages.length; index += 2) {
      expect(messages[index + 1]?.tool_call_id).toBe(messages[index]?.tool_calls[0]?.id);
    }
  });
});
