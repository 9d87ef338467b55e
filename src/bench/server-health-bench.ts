import type { RunningServer } from "../server/start-server.js";
import type { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { type Figure, median } from "./measure.js";

/**
 * Whether one heavy turn freezes the server: `/api/health` latency while a turn with a
 * 300,000-character message without spaces runs, against the same on the idle server. Health is
 * asked one request after another, so every stretch the event loop is blocked shows up as a slow
 * answer.
 */

export const HEAVY_MESSAGE_CHARS = 300_000;
const HEAVY_TURNS = 3;
const IDLE_SAMPLES = 50;

/** Every API route, health included, asks for the server's access token. */
const authorization = (server: RunningServer) => `Bearer ${server.token}`;

async function healthMs(server: RunningServer): Promise<number> {
  const start = performance.now();
  const response = await fetch(new URL("/api/health", server.url), {
    headers: { authorization: authorization(server) },
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`/api/health answered ${response.status}`);
  return performance.now() - start;
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

/** Health latencies sampled back to back for as long as `work` runs. */
async function sampleWhile(server: RunningServer, work: Promise<unknown>): Promise<number[]> {
  let done = false;
  const finished = work.finally(() => {
    done = true;
  });
  const samples: number[] = [];
  while (!done) samples.push(await healthMs(server));
  await finished;
  return samples;
}

// Built once: the client runs in the server's process, and its own work must not count.
const HEAVY_BODY = JSON.stringify({ message: "x".repeat(HEAVY_MESSAGE_CHARS) });

async function heavyTurn(store: SqliteSessionStore, server: RunningServer): Promise<void> {
  const session = store.createSession({ title: "heavy", config: {} });
  const response = await fetch(new URL(`/api/sessions/${session}/turns`, server.url), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: authorization(server) },
    body: HEAVY_BODY,
  });
  const text = await response.text();
  if (!text.includes('"status":"completed"')) throw new Error("the heavy turn did not complete");
}

export async function healthDuringHeavyTurn(
  store: SqliteSessionStore,
  server: RunningServer,
): Promise<Figure> {
  const idle: number[] = [];
  await healthMs(server);
  for (let sample = 0; sample < IDLE_SAMPLES; sample++) idle.push(await healthMs(server));
  const busy: number[] = [];
  let turnMs = 0;
  for (let turn = 0; turn < HEAVY_TURNS; turn++) {
    const start = performance.now();
    busy.push(...(await sampleWhile(server, heavyTurn(store, server))));
    turnMs += performance.now() - start;
  }
  const idleP50 = median(idle);
  const busyP50 = median(busy);
  const busyMax = Math.max(...busy);
  console.log(
    `  /api/health idle: p50 ${idleP50.toFixed(2)} ms, max ${Math.max(...idle).toFixed(2)} ms (${idle.length} samples)\n` +
      `  /api/health during a ${HEAVY_MESSAGE_CHARS.toLocaleString("en")}-character no-space turn: p50 ${busyP50.toFixed(2)} ms, ` +
      `p95 ${percentile(busy, 0.95).toFixed(2)} ms, max ${busyMax.toFixed(2)} ms (${busy.length} samples over ${HEAVY_TURNS} turns, ${(turnMs / HEAVY_TURNS).toFixed(0)} ms a turn)`,
  );
  return {
    name: `/api/health max latency while a ${HEAVY_MESSAGE_CHARS.toLocaleString("en")}-character no-space turn runs (sim model)`,
    value: `${busyMax.toFixed(1)} ms (p50 ${busyP50.toFixed(2)} ms)`,
    baseline: `${Math.max(...idle).toFixed(1)} ms (p50 ${idleP50.toFixed(2)} ms, idle server)`,
    ratio: busyMax / Math.max(...idle),
    target: "max < 50 ms",
    met: busyMax < 50,
  };
}
