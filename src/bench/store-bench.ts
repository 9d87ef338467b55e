import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { USAGE_COLUMNS } from "../store/sqlite/statements.js";
import { TURN_AGGREGATE_SQL } from "../store/sqlite/usage-rollups.js";
import { type Figure, median, printFigures, timeMedian } from "./measure.js";

const RAW_INSERT = `
  INSERT INTO usage_stats (
    session_id, turn_index, round_index, prompt_tokens, completion_tokens, total_tokens,
    cached_tokens, ttft_ms, elapsed_ms, created_at, agent, call_kind, event_id, event_name,
    used_fallback, tool_latency_ms, metric_key)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

const DUAL_AGENT = '{"tool_invocation_mode":"dual_agent"}';

/**
 * AGENT_LAB_STORE_SIZE=small divides the files by ten (a quick look), `tiny` by fifty and more
 * (the smoke test's run); the figures and their targets are for the default sizes.
 */
const SIZES = {
  default: { calls: 20_000, sessions: 10_000, rows: 1_000_000, big_session_calls: 100_000 },
  small: { calls: 2_000, sessions: 1_000, rows: 100_000, big_session_calls: 10_000 },
  tiny: { calls: 500, sessions: 200, rows: 10_000, big_session_calls: 2_000 },
};

function sizes(): (typeof SIZES)["default"] {
  const wanted = process.env.AGENT_LAB_STORE_SIZE?.trim() || "default";
  if (wanted !== "default" && wanted !== "small" && wanted !== "tiny") {
    throw new Error(`AGENT_LAB_STORE_SIZE=${wanted}: choose default, small or tiny`);
  }
  return SIZES[wanted];
}

const count = (value: number) => value.toLocaleString("en");

function freshStore(directory: string, name: string): { store: SqliteSessionStore; path: string } {
  const path = join(directory, name);
  const store = new SqliteSessionStore(path);
  store.createSession({ title: "bench", config: {}, session_id: "bench" });
  store.startTurn("bench", { turn_index: 1, user_message: "go" });
  return { store, path };
}

/** The values appendUsage binds for a throughput figure's call, in USAGE_COLUMNS order. */
export function usageRow(
  index: number,
  sessionId = "bench",
  metricKey = `chat:1:${index}`,
): unknown[] {
  const values: Record<(typeof USAGE_COLUMNS)[number], unknown> = {
    session_id: sessionId,
    turn_index: 1,
    round_index: 1,
    prompt_tokens: 3,
    completion_tokens: 7,
    total_tokens: 10,
    cached_tokens: 2,
    reasoning_tokens: 0,
    cache_write_tokens: 0,
    ttft_ms: 120,
    elapsed_ms: 450,
    created_at: new Date().toISOString(),
    agent: "chat_agent",
    call_kind: "chat_completion",
    event_id: null,
    event_name: null,
    used_fallback: 0,
    tool_latency_ms: null,
    metric_key: metricKey,
    estimated: 0,
    usage_source: "endpoint",
    cost_usd: null,
    cost_estimated_usd: null,
    response_model: null,
    response_id: null,
    system_fingerprint: null,
    finish_reason: null,
    refusal: 0,
    raw_usage_json: null,
  };
  return USAGE_COLUMNS.map((column) => values[column]);
}

/** appendUsage against a raw prepared INSERT of the same row into the same schema and pragmas. */
function appendThroughput(directory: string): Figure {
  const { calls } = sizes();
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
    // The same row appendUsage writes: every column bound, as the store binds them.
    const insert = raw.prepare(
      `INSERT INTO usage_stats (${USAGE_COLUMNS.join(", ")}) VALUES (${USAGE_COLUMNS.map(() => "?").join(", ")})`,
    );
    start = performance.now();
    for (let index = 0; index < calls; index++) {
      insert.run(...usageRow(index));
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
export function populate(
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
  const { sessions, rows } = sizes();
  const path = join(directory, "list-sessions.sqlite3");
  const started = performance.now();
  populate(path, sessions, rows);
  console.log(
    `  (built ${count(sessions)} sessions and ${count(rows)} usage rows in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
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
    name: `listSessions, ${count(sessions)} sessions and ${count(rows)} usage rows (median of 15)`,
    value: `${storeMs.toFixed(1)} ms`,
    baseline: `${rawMs.toFixed(1)} ms (raw per-session aggregate query)`,
    ratio: storeMs / rawMs,
    target: "<= 25 ms",
    met: storeMs <= 25,
  };
}

function rollupFigures(directory: string): Figure[] {
  const { big_session_calls: calls } = sizes();
  const path = join(directory, "big-session.sqlite3");
  populate(path, 10, 1000, { id: "big", calls });
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
  if (rollups.session.call_count !== calls) throw new Error("roll-up lost calls");
  return [
    {
      name: `usageSummary roll-ups (turns + session) of a ${count(calls)}-call session (median of 15)`,
      value: `${rollupMs.toFixed(1)} ms`,
      baseline: `${aggregateMs.toFixed(1)} ms (raw GROUP BY turn aggregate)`,
      ratio: rollupMs / aggregateMs,
      target: "<= 2x",
      met: rollupMs / aggregateMs <= 2,
    },
    {
      name: `usageSummary in full (${count(calls)} typed call records + roll-ups), for reference`,
      value: `${summaryMs.toFixed(1)} ms`,
      baseline: `${rowsMs.toFixed(1)} ms (raw SELECT * of the calls + aggregate)`,
      ratio: summaryMs / rowsMs,
      target: "none",
      met: true,
    },
  ];
}

/**
 * A chat-completions request as the openai adapter sends it in a tool conversation of `rounds`
 * rounds: system prompt, two tool schemas, and the history so far (user turns, tool calls, tool
 * results of five search hits, answers). 25 rounds is about 30 KB; each round adds about 1.2 KB.
 */
function requestBody(rounds: number, seed: number): string {
  const messages: unknown[] = [
    { role: "system", content: "You are a careful support agent. Use the tools. ".repeat(12) },
  ];
  for (let round = 0; round < rounds; round++) {
    const order = 1000 + seed * 100 + round;
    const callId = `call_${(order * 7919).toString(36)}${round}`;
    messages.push(
      { role: "user", content: `Where is order ${order}? The tracking page says pending.` },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: callId,
            type: "function",
            function: {
              name: "mock_search",
              arguments: JSON.stringify({ query: `order ${order} status` }),
            },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: callId,
        content: JSON.stringify({
          results: Array.from({ length: 5 }, (_, hit) => ({
            id: `doc-${order}-${hit}`,
            title: `Shipping policy ${hit} for region ${order % 7}`,
            snippet: `Orders placed before ${hit + 2} pm ship the same day; backorders ship within ${(order % 9) + 2} business days (ref ${(order * 31 + hit).toString(36)}).`,
          })),
        }),
      },
      {
        role: "assistant",
        content: `Order ${order} ships within ${(order % 5) + 1} business days; I opened ticket T-${order + 4000} so you hear when the carrier scans it.`,
      },
    );
  }
  const parameters = (properties: Record<string, unknown>) => ({
    type: "object",
    properties,
    required: Object.keys(properties).slice(0, 1),
  });
  return JSON.stringify({
    model: "gpt-4.1-mini",
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0.2,
    messages,
    tools: [
      {
        type: "function",
        function: {
          name: "mock_search",
          description: "Search the knowledge base",
          parameters: parameters({ query: { type: "string" }, limit: { type: "integer" } }),
        },
      },
      {
        type: "function",
        function: {
          name: "mock_ticket",
          description: "Open a support ticket",
          parameters: parameters({
            title: { type: "string" },
            priority: { enum: ["low", "high"] },
          }),
        },
      },
    ],
  });
}

/** The raw SSE stream of a ~4 KB answer: one chunk per word, then usage and [DONE]. */
function responseStream(seed: number): string {
  const id = `chatcmpl-${(seed * 104729).toString(36)}`;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1764547200 + seed, model: "gpt-4.1-mini-2025-04-14", system_fingerprint: "fp_6f2eabb9a5", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const words =
    `Order ${seed} ships within three business days; the carrier scans it tonight.`.split(" ");
  let stream = chunk({ role: "assistant", content: "" });
  for (let index = 0; index < 20; index++) {
    stream += chunk({ content: `${words[index % words.length]} ` });
  }
  stream += chunk({}, "stop");
  stream += `data: ${JSON.stringify({ id, object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 7000 + seed, completion_tokens: 21, total_tokens: 7021 + seed } })}\n\ndata: [DONE]\n\n`;
  return stream;
}

/**
 * Storage and append time of 1,000 model calls, with payload capture off (appendUsage alone) and
 * on (appendUsage + appendCallPayload of each call's request and raw stream). The calls are 50
 * sessions of 20 rounds whose request grows from 15 to 38 KB (history), answers ~4 KB of SSE.
 */
function payloadCaptureFigures(directory: string): Figure[] {
  const sessions = 50;
  const rounds = 20;
  const bodies = Array.from({ length: rounds }, (_, round) => requestBody(12 + round, round));
  const streams = Array.from({ length: rounds }, (_, round) => responseStream(round));
  const rawBytes =
    sessions *
    (bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0) +
      streams.reduce((sum, stream) => sum + Buffer.byteLength(stream), 0));
  const measure = (capture: boolean, attempt: number) => {
    const path = join(directory, `capture-${capture ? "on" : "off"}-${attempt}.sqlite3`);
    let store = new SqliteSessionStore(path);
    for (let session = 0; session < sessions; session++) {
      store.createSession({ title: "bench", config: {}, session_id: `s${session}` });
      store.startTurn(`s${session}`, { turn_index: 1, user_message: "go" });
    }
    // Closing checkpoints the WAL into the file and truncates it: the file is the whole database.
    store.close();
    const before = statSync(path).size;
    store = new SqliteSessionStore(path);
    const start = performance.now();
    for (let session = 0; session < sessions; session++) {
      for (let round = 0; round < rounds; round++) {
        const metric_key = `chat:1:${round + 1}`;
        const request = bodies[round] as string;
        const response = streams[round] as string;
        store.appendUsage(`s${session}`, {
          turn_index: 1,
          round_index: round + 1,
          usage: { prompt_tokens: 7000, completion_tokens: 21, total_tokens: 7021 },
          ttft_ms: 300,
          elapsed_ms: 900,
          metadata: {
            metric_key,
            response_model: "gpt-4.1-mini-2025-04-14",
            finish_reason: "stop",
          },
        });
        if (!capture) continue;
        store.appendCallPayload(`s${session}`, {
          metric_key,
          turn_index: 1,
          round_index: round + 1,
          agent: "chat_agent",
          request_body: request,
          response_body: response,
          request_bytes: Buffer.byteLength(request),
          response_bytes: Buffer.byteLength(response),
          request_truncated: false,
          response_truncated: false,
        });
      }
    }
    const msPerCall = (performance.now() - start) / (sessions * rounds);
    store.close();
    return { bytes: statSync(path).size - before, msPerCall };
  };
  const runs = (capture: boolean) => [0, 1, 2].map((attempt) => measure(capture, attempt));
  const off = runs(false);
  const on = runs(true);
  const offBytes = median(off.map((run) => run.bytes));
  const onBytes = median(on.map((run) => run.bytes));
  const offMs = median(off.map((run) => run.msPerCall));
  const onMs = median(on.map((run) => run.msPerCall));
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  return [
    {
      name: `database growth per 1,000 calls, payload capture on (bodies ${mib(rawBytes)} before compression)`,
      value: `${mib(onBytes)} (${((onBytes - offBytes) / 1000 / 1024).toFixed(1)} KiB a call more; bodies compressed ${(rawBytes / (onBytes - offBytes)).toFixed(1)}x)`,
      baseline: `${(offBytes / 1024).toFixed(0)} KiB (capture off)`,
      ratio: onBytes / offBytes,
      target: "none (reference)",
      met: true,
    },
    {
      name: "append time per call, appendUsage + appendCallPayload (median of 3 runs of 1,000)",
      value: `${onMs.toFixed(3)} ms`,
      baseline: `${offMs.toFixed(3)} ms (appendUsage alone, capture off)`,
      ratio: onMs / offMs,
      target: "none (reference)",
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
      ...payloadCaptureFigures(directory),
      listSessionsFigure(directory),
      ...rollupFigures(directory),
    ];
    printFigures("SqliteSessionStore", figures);
    return figures;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
