import { join } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  INSERT_LEGACY_USAGE,
  LEGACY_MESSAGES,
  LEGACY_TURNS,
  LEGACY_USAGE_WITH_METRIC_KEY,
} from "../../../test/legacy-layouts.js";
import { distStoreUrl, repoRoot, temporaryDirectory } from "../../../test/paths.js";

const WORKERS = 8;
/** Each round is a fresh legacy file; an unguarded migration fails within the first few. */
const ROUNDS = 12;

type WorkerResult =
  | { ok: true; messages: { tool_calls: unknown[] }[] }
  | { ok: false; error: string };

function writeLegacyFile(path: string): void {
  const connection = new Database(path);
  connection.exec(LEGACY_MESSAGES);
  connection.exec(LEGACY_TURNS);
  connection.exec(LEGACY_USAGE_WITH_METRIC_KEY);
  const insert = connection.prepare(INSERT_LEGACY_USAGE);
  for (const [id, key] of [
    [7, "chat:1:1"],
    [11, "chat:1:1"],
    [13, null],
    [17, null],
  ] as const) {
    insert.run(id, key);
  }
  connection.exec(`
    INSERT INTO messages (session_id, turn_index, role, content, name, tool_call_id, created_at)
    VALUES ('legacy', 1, 'assistant', 'visible', NULL, NULL, 'now')`);
  connection.close();
}

function openTogether(path: string): Promise<WorkerResult[]> {
  const barrier = new SharedArrayBuffer(8);
  return Promise.all(
    Array.from(
      { length: WORKERS },
      () =>
        new Promise<WorkerResult>((resolve, reject) => {
          const worker = new Worker(join(repoRoot, "test/workers/open-store-worker.cjs"), {
            workerData: { moduleUrl: distStoreUrl, path, barrier, count: WORKERS },
          });
          worker.once("message", (result: WorkerResult) => {
            resolve(result);
            void worker.terminate();
          });
          worker.once("error", reject);
        }),
    ),
  );
}

function count<T>(items: readonly T[], item: T): number {
  return items.filter((candidate) => candidate === item).length;
}

describe("SqliteSessionStore: concurrent initialization", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(() => directory.remove());

  it("migrates safely across eight concurrent openers (seed: test_sqlite_store_migration_is_safe_across_concurrent_initialization)", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const databasePath = join(directory.path, `concurrent-legacy-${round}.sqlite3`);
      writeLegacyFile(databasePath);

      const results = await openTogether(databasePath);

      expect(
        results.filter((result) => !result.ok),
        `round ${round}`,
      ).toStrictEqual([]);
      for (const result of results) {
        expect(result.ok && result.messages[0]?.tool_calls).toStrictEqual([]);
      }
      const migrated = new Database(databasePath);
      const columns = Object.fromEntries(
        ["messages", "turns", "usage_stats"].map((table) => [
          table,
          (migrated.pragma(`table_info(${table})`) as { name: string }[]).map((row) => row.name),
        ]),
      );
      const metricIndexes = (migrated.pragma("index_list(usage_stats)") as { name: string }[]).map(
        (row) => row.name,
      );
      const usageRows = migrated
        .prepare("SELECT id, session_id, metric_key FROM usage_stats ORDER BY id")
        .raw()
        .all();
      migrated.close();

      expect(count(columns.messages ?? [], "tool_calls_json")).toBe(1);
      expect(count(columns.turns ?? [], "wall_time_ms")).toBe(1);
      const usageColumns = columns.usage_stats ?? [];
      for (const column of [
        "agent",
        "call_kind",
        "event_id",
        "event_name",
        "used_fallback",
        "tool_latency_ms",
        "metric_key",
      ]) {
        expect(count(usageColumns, column), column).toBe(1);
      }
      expect(count(metricIndexes, "usage_stats_metric_key_uq")).toBe(1);
      expect(usageRows).toStrictEqual([
        [7, "legacy", "chat:1:1"],
        [13, "legacy", null],
        [17, "legacy", null],
      ]);
    }
  });
});
