import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Figure, median, printFigures } from "./measure.js";
import {
  agentLabClient,
  aiSdkClient,
  type BenchClient,
  openaiNodeClient,
  rawFetchClient,
  type StreamKind,
} from "./provider-clients.js";
import { CHUNKS } from "./provider-stream-bodies.js";

const CLIENTS: [string, BenchClient][] = [
  ["raw fetch + SSE parse + JSON.parse (baseline)", rawFetchClient],
  ["agent-lab openai adapter", agentLabClient],
  ["openai-node (openai@6)", openaiNodeClient],
  ["AI SDK streamText (ai@6 + @ai-sdk/openai-compatible@2)", aiSdkClient],
];
const WARMUP = 10;
const ROUNDS = 40;

function startServer(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const script = fileURLToPath(new URL("./provider-stream-server.js", import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout?.once("data", (data: Buffer) => {
      resolve({ child, baseUrl: `http://127.0.0.1:${data.toString().trim()}/v1` });
    });
  });
}

interface ClientTotals {
  cpuMicros: number;
  /** Each measured round's CPU, in round order, for paired ratios. */
  rounds: number[];
  ttfts: number[];
  deltas: number;
}

/**
 * Rounds interleave the clients so that machine noise falls on all of them alike; odd rounds run
 * them in reverse, so no client always follows the same one (the heaviest leaves garbage behind).
 */
async function measure(baseUrl: string, kind: StreamKind): Promise<Map<string, ClientTotals>> {
  const totals = new Map<string, ClientTotals>(
    CLIENTS.map(([name]) => [name, { cpuMicros: 0, rounds: [], ttfts: [], deltas: 0 }]),
  );
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const order = round % 2 === 0 ? CLIENTS : [...CLIENTS].reverse();
    for (const [name, client] of order) {
      const before = process.cpuUsage();
      const run = await client(baseUrl, kind);
      const used = process.cpuUsage(before);
      if (round < WARMUP) continue;
      const entry = totals.get(name) as ClientTotals;
      entry.cpuMicros += used.user + used.system;
      entry.rounds.push(used.user + used.system);
      entry.ttfts.push(run.ttft_ms);
      entry.deltas = run.deltas;
    }
  }
  return totals;
}

/**
 * The median of the per-round ratios: each round measures both clients back to back, so a burst
 * of load from another process spoils one pair, not the whole sum.
 */
function pairedRatio(ours: ClientTotals, baseline: ClientTotals): number {
  return median(ours.rounds.map((cpu, index) => cpu / (baseline.rounds[index] ?? Number.NaN)));
}

export async function runProviderBench(): Promise<Figure[]> {
  console.log(
    `\nprovider benchmark: ${CHUNKS}-chunk streams from a local server in a child process, ${ROUNDS} rounds after ${WARMUP} warm-up`,
  );
  const { child, baseUrl } = await startServer();
  const figures: Figure[] = [];
  try {
    for (const kind of ["text", "tool", "reasoning"] as const) {
      const totals = await measure(baseUrl, kind);
      const perChunk = (name: string) =>
        (totals.get(name) as ClientTotals).cpuMicros / (ROUNDS * CHUNKS);
      const ttft = (name: string) => median((totals.get(name) as ClientTotals).ttfts);
      const [baselineName] = CLIENTS[0] as [string, BenchClient];
      const baseCpu = perChunk(baselineName);
      const baseTtft = ttft(baselineName);
      console.log(`\n  ${kind} stream`);
      for (const [name] of CLIENTS) {
        const entry = totals.get(name) as ClientTotals;
        console.log(
          `    ${name.padEnd(56)} ${perChunk(name).toFixed(2).padStart(6)} µs/chunk (${(perChunk(name) / baseCpu).toFixed(2)}x)` +
            `  TTFT ${ttft(name).toFixed(2)} ms (${ttft(name) - baseTtft >= 0 ? "+" : ""}${(ttft(name) - baseTtft).toFixed(2)} ms)  deltas ${entry.deltas}`,
        );
      }
      const ours = "agent-lab openai adapter";
      const paired = pairedRatio(
        totals.get(ours) as ClientTotals,
        totals.get(baselineName) as ClientTotals,
      );
      console.log(
        `    adapter / baseline, median of ${ROUNDS} paired rounds: ${paired.toFixed(2)}x (ratio of sums ${(perChunk(ours) / baseCpu).toFixed(2)}x)`,
      );
      figures.push(
        {
          name: `openai adapter CPU per chunk, ${kind} stream (median of paired rounds)`,
          value: `${perChunk(ours).toFixed(2)} µs/chunk`,
          baseline: `${baseCpu.toFixed(2)} µs/chunk (raw fetch + SSE parse + JSON.parse)`,
          ratio: paired,
          target: "<= 1.1x",
          met: paired <= 1.1,
        },
        {
          name: `openai adapter TTFT, ${kind} stream`,
          value: `${ttft(ours).toFixed(2)} ms`,
          baseline: `${baseTtft.toFixed(2)} ms`,
          ratio: ttft(ours) / baseTtft,
          target: "within 0.3 ms of the baseline",
          met: ttft(ours) - baseTtft <= 0.3,
        },
      );
    }
  } finally {
    child.stdin?.end();
    child.kill();
  }
  printFigures("Providers", figures);
  return figures;
}
