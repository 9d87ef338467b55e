import { statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { temporaryDirectory } from "../../../test/paths.js";
import { JOURNAL_SIZE_LIMIT_BYTES } from "./open-database.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";
import { IDLE_CHECK_MS } from "./wal-keeper.js";

const walSize = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;

describe("SqliteSessionStore: the -wal file stays bounded", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  it("grows past the limit only while another connection holds a long read, then comes back under it", () => {
    const path = join(directory.path, "wal.sqlite3");
    const store = new SqliteSessionStore(path);
    const reader = new Database(path);
    try {
      expect(store.persistent).toBe(true);
      expect(store.journal_mode).toBe("wal");
      store.createSession({ title: "wal", session_id: "wal", config: {} });
      const { turn_index } = store.claimTurn("wal", { user_message: "go", runner: "1@h" });
      const content = "x".repeat(8_000);

      // The reader's snapshot pins the log: no checkpoint can reset it while the read lasts.
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM messages").get();
      for (let index = 0; index < 2_000; index++) {
        store.appendMessage("wal", { turn_index, message: { role: "assistant", content } });
      }
      expect(walSize(path)).toBeGreaterThan(3 * JOURNAL_SIZE_LIMIT_BYTES);
      reader.exec("COMMIT");

      for (let index = 0; index < 1_500; index++) {
        store.appendAudit("wal", { event: "after", details: { index }, turn_index });
      }
      expect(walSize(path)).toBeLessThanOrEqual(JOURNAL_SIZE_LIMIT_BYTES);
      expect(store.listMessages("wal")).toHaveLength(2_001);

      // Closing (while the reader's connection stays open) empties it.
      store.close();
      expect(walSize(path)).toBe(0);
      expect(reader.prepare("SELECT count(*) FROM audit_logs").pluck().get()).toBe(1_500);
    } finally {
      reader.close();
      store.close();
    }
  });

  it("is emptied once the store has gone idle, while it stays open; not while a reader needs it", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const path = join(directory.path, "idle.sqlite3");
    const store = new SqliteSessionStore(path);
    const reader = new Database(path);
    try {
      store.createSession({ title: "idle", session_id: "idle", config: {} });
      for (let index = 0; index < 200; index++) {
        store.appendAudit("idle", { event: "write", details: { index } });
      }
      expect(walSize(path)).toBeGreaterThan(0);
      reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM audit_logs").get();
      vi.advanceTimersByTime(3 * IDLE_CHECK_MS);
      // The reader still uses the log: the checkpoint waits rather than blocking anyone.
      expect(walSize(path)).toBeGreaterThan(0);
      reader.exec("COMMIT");
      vi.advanceTimersByTime(IDLE_CHECK_MS);
      expect(walSize(path)).toBe(0);
      expect(store.listAuditLogs("idle")).toHaveLength(200);
    } finally {
      reader.close();
      store.close();
      vi.useRealTimers();
    }
  });

  it("an in-memory database says it keeps nothing, and never claims a journal", () => {
    const store = new SqliteSessionStore(":memory:");
    try {
      expect(store.persistent).toBe(false);
      expect(store.journal_mode).toBe("memory");
      store.createSession({ title: "m", session_id: "m", config: {} });
      expect(store.getSession("m")?.title).toBe("m");
    } finally {
      store.close();
    }
  });
});
