import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { TURN_AGGREGATE_SQL } from "../store/sqlite/usage-rollups.js";
import { type Figure, median, printFigures, timeMedian } from "./measure.js";

const RAW_INSERT = `
  INSERT INTO usage_stats (
    session_id, turn_index, round_index, prompt_tokens, completion_tokens, total_tokens,
    cached_tokens, ttft_ms, elapsed_ms, created_at, agent, call_kind, event_id, event_name,
    used_fallback, tool_latency_ms, metric_key)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

const DUAL_AGENT = '{"tool_invocation_mode":"dual_agent"}';

function freshStore(directory: string, name: string): { store: SqliteSessionStore; path: string } {
  const path = join(directory, name);
  const store = new SqliteSessionStore(path);
  store.createSession({ title: "bench", config: {}, session_id: "bench" });
  store.startTurn("bench", { turn_index: 1, user_message: "go" });
  return { store, path };
}

/** appendUsage against a raw prepared INSERT of the same row into the same schema and pragmas. */
function appendThroughput(directory: string): Figure {
  const calls = 20_000;
  const storeRates: number[] = [];
  const rawRates: number[] = [];
  for (let round = 0; round < 3; round++) {
    const { store } = freshStore(directory, `append-store-${round}.sqlite3`);
    let start = performance.now();
    for (let index = 0; index < calls; index++) {
      store.appendUsage("bench", {
        turn_index: 1,
        round_index: 1,
        usage: { prompt_tokens: 3, completion_tokens: 7, total_tokens: 10, cached_tokens: 2 },
        ttft_ms: 120,
        elapsed_ms: 450,
        metadata: { metric_key: `chat:1:${index}` },
      });
    }
    storeRates.push(calls / ((performance.now() - start) / 1000));
    store.close();

    const { store: rawSetup, path } = freshStore(directory, `append-raw-${round}.sqlite3`);
    rawSetup.close();
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    const insert = raw.prepare(RAW_INSERT);
    start = performance.now();
    for (let index = 0; index < calls; index++) {
      insert.run(
        "bench",
        1,
        1,
        3,
        7,
        10,
        2,
        120,
        450,
        new Date().toISOString(),
        "chat_agent",
        "chat_completion",
        null,
        null,
        0,
        null,
        `chat:1:${index}`,
      );
    }
    rawRates.push(calls / ((performance.now() - start) / 1000));
    raw.close();
  }
  const store = median(storeRates);
  const raw = median(rawRates);
  return {
    name: `appendUsage throughput (${calls} calls, each its own transaction, median of 3)`,
    value: `${Math.round(store)} calls/s`,
    baseline: `${Math.round(raw)} rows/s (raw prepared INSERT)`,
    ratio: store / raw,
    target: ">= 0.8x",
    met: store / raw >= 0.8,
  };
}

/** A file with `sessions` sessions of two turns each and `rows` usage rows spread over them. */
function populate(
  path: string,
  sessions: number,
  rows: number,
  bigSession?: { id: string; calls: number },
): void {
  new SqliteSessionStore(path).close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const insertSession = db.prepare(
    "INSERT INTO sessions (id, title, created_at, updated_at, config_json, turn_count) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const insertTurn = db.prepare(
    "INSERT INTO turns (session_id, turn_index, user_message, started_at, wall_time_ms) VALUES (?, ?, ?, ?, ?)",
  );
  const insertUsage = db.prepare(RAW_INSERT);
  const stamp = new Date().toISOString();
  db.transaction(() => {
    for (let index = 0; index < sessions; index++) {
      const id = `session-${index}`;
      insertSession.run(id, `Session ${index}`, stamp, stamp, DUAL_AGENT, 2);
      insertTurn.run(id, 1, "hello", stamp, 900);
      insertTurn.run(id, 2, "again", stamp, 700);
    }
    for (let index = 0; index < rows; index++) {
      const id = `session-${index % sessions}`;
      insertUsage.run(
        id,
        1 + (index % 2),
        1,
        30,
        12,
        42,
        8,
        100,
        300,
        stamp,
        "chat_agent",
        "chat_completion",
        null,
        null,
        0,
        null,
        `k:${index}`,
      );
    }
    if (bigSession) {
      insertSession.run(bigSession.id, "big", stamp, stamp, DUAL_AGENT, 100);
      const kinds = ["chat_completion", "argument_fallback", "tool_execution"] as const;
      for (let turn = 1; turn <= 100; turn++)
        insertTurn.run(bigSession.id, turn, "turn", stamp, 1000);
      for (let index = 0; index < bigSession.calls; index++) {
        const kind = kinds[index % 3] as string;
        insertUsage.run(
          bigSession.id,
          1 + (index % 100),
          1,
          30,
          12,
          42,
          8,
          100,
          300,
          stamp,
          "chat_agent",
          kind,
          null,
          null,
          0,
          null,
          `big:${index}`,
        );
      }
    }
  })();
  db.close();
}

function listSessionsFigure(directory: string): Figure {
  const path = join(directory, "ten-thousand-sessions.sqlite3");
  const started = performance.now();
  populate(path, 10_000, 1_000_000);
  console.log(
    `  (built 10,000 sessions and 1,000,000 usage rows in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  const store = new SqliteSessionStore(path);
  const raw = new Database(path, { readonly: true });
  const naive = raw.prepare(`
    SELECT s.id, s.title, s.created_at, s.updated_at,
           (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turn_count,
           (SELECT COALESCE(SUM(total_tokens), 0) FROM usage_stats u WHERE u.session_id = s.id) AS total_tokens
    FROM sessions s ORDER BY s.updated_at DESC, s.id DESC`);
  const storeMs = timeMedian(() => store.listSessions(), 15);
  const rawMs = timeMedian(() => naive.all(), 5);
  const listed = store.listSessions();
  const check = naive.all() as { id: string; total_tokens: number }[];
  const agree =
    listed.length === check.length &&
    listed.every((row, index) => row.total_tokens === check[index]?.total_tokens);
  store.close();
  raw.close();
  if (!agree) throw new Error("listSessions totals disagree with the raw aggregate");
  return {
    name: "listSessions, 10,000 sessions and 1,000,000 usage rows (median of 15)",
    value: `${storeMs.toFixed(1)} ms`,
    baseline: `${rawMs.toFixed(1)} ms (raw per-session aggregate query)`,
    ratio: storeMs / rawMs,
    target: "<= 25 ms",
    met: storeMs <= 25,
  };
}

function rollupFigures(directory: string): Figure[] {
  const path = join(directory, "big-session.sqlite3");
  populate(path, 10, 1000, { id: "big", calls: 100_000 });
  const store = new SqliteSessionStore(path);
  const raw = new Database(path, { readonly: true });
  const aggregate = raw.prepare(TURN_AGGREGATE_SQL);
  const everything = raw.prepare("SELECT * FROM usage_stats WHERE session_id = ? ORDER BY id");
  const rollupMs = timeMedian(() => store.usageRollups("big"), 15);
  const aggregateMs = timeMedian(() => aggregate.all("big"), 15);
  const summaryMs = timeMedian(() => store.usageSummary("big"), 7);
  const rowsMs = timeMedian(() => {
    everything.all("big");
    aggregate.all("big");
  }, 7);
  const rollups = store.usageRollups("big");
  store.close();
  raw.close();
  if (rollups.session.call_count !== 100_000) throw new Error("roll-up lost calls");
  return [
    {
      name: "usageSummary roll-ups (turns + session) of a 100,000-call session (median of 15)",
      value: `${rollupMs.toFixed(1)} ms`,
      baseline: `${aggregateMs.toFixed(1)} ms (raw GROUP BY turn aggregate)`,
      ratio: rollupMs / aggregateMs,
      target: "<= 2x",
      met: rollupMs / aggregateMs <= 2,
    },
    {
      name: "usageSummary in full (100,000 typed call records + roll-ups), for reference",
      value: `${summaryMs.toFixed(1)} ms`,
      baseline: `${rowsMs.toFixed(1)} ms (raw SELECT * of the calls + aggregate)`,
      ratio: summaryMs / rowsMs,
      target: "none",
      met: true,
    },
  ];
}

export function runStoreBench(): Figure[] {
  const directory = mkdtempSync(join(tmpdir(), "agent-lab-bench-"));
  try {
    console.log("store benchmark (files in a temporary folder, removed afterwards)");
    const figures = [
      appendThroughput(directory),
      listSessionsFigure(directory),
      ...rollupFigures(directory),
    ];
    printFigures("SqliteSessionStore", figures);
    return figures;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
