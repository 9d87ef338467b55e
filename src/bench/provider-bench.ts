import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type Figure, leastDisturbed, median, printFigures } from "./measure.js";
import type { StreamKind } from "./provider-clients.js";
import {
  cpuPerChunk,
  LONG_CHUNKS,
  SHORT_CHUNKS,
  type StreamLength,
} from "./provider-stream-bodies.js";

/** Display name, and the worker's name for the client. */
const CLIENTS: [string, string][] = [
  ["raw fetch + SSE parse + JSON.parse (baseline)", "raw"],
  ["agent-lab openai adapter", "lab"],
  ["openai-node (openai@6)", "openai-node"],
  ["AI SDK streamText (ai@6 + @ai-sdk/openai-compatible@2)", "ai-sdk"],
];
const BASELINE = "raw fetch + SSE parse + JSON.parse (baseline)";
const OURS = "agent-lab openai adapter";
const WARMUP = 10;
const ROUNDS = Number(process.env.AGENT_LAB_PROVIDER_ROUNDS ?? 80);
/**
 * Calls per sample: a burst of load from another process then spoils a third of a sample, not a
 * whole one. With one call per sample the per-chunk figure (a difference of two medians) swung
 * from 0.5x to 1.4x between runs on this shared machine.
 */
const CALLS = Number(process.env.AGENT_LAB_PROVIDER_CALLS ?? 3);

/** The benchmarks' model endpoint (provider-stream-server.ts), in a child process. */
export function startStreamServer(): Promise<{ child: ChildProcess; baseUrl: string }> {
  const script = fileURLToPath(new URL("./provider-stream-server.js", import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout?.once("data", (data: Buffer) => {
      resolve({ child, baseUrl: `http://127.0.0.1:${data.toString().trim()}/v1` });
    });
  });
}

/** A client in its own process (see provider-bench-worker.ts): one call per request, in order. */
interface ClientWorker {
  call(kind: StreamKind, length: StreamLength): Promise<WorkerRun>;
  stop(): void;
}

interface WorkerRun {
  cpu_us: number;
  ttft_ms: number;
  deltas: number;
}

function startWorker(client: string, baseUrl: string): ClientWorker {
  const script = fileURLToPath(new URL("./provider-bench-worker.js", import.meta.url));
  const child = spawn(process.execPath, [script, client, baseUrl], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const waiting: { resolve: (run: WorkerRun) => void; reject: (error: Error) => void }[] = [];
  lines.on("line", (line) => waiting.shift()?.resolve(JSON.parse(line) as WorkerRun));
  let exited: Error | null = null;
  child.once("exit", (code) => {
    exited = new Error(`bench client ${client} exited (code ${code})`);
    for (const pending of waiting.splice(0)) pending.reject(exited);
  });
  return {
    call: (kind, length) =>
      new Promise((resolve, reject) => {
        if (exited) return reject(exited);
        waiting.push({ resolve, reject });
        child.stdin?.write(`${kind} ${length} ${CALLS}\n`);
      }),
    stop: () => {
      child.stdin?.end();
    },
  };
}

/** One client's measured rounds: CPU µs of each long and each short stream, in round order. */
interface ClientRounds {
  long: number[];
  short: number[];
  ttfts: number[];
  deltas: number;
}

/**
 * Rounds interleave the clients so that machine noise falls on all of them alike; odd rounds run
 * them in reverse, so no client always follows the same one (the heaviest leaves garbage behind).
 * Each client reads a long and a short stream per round; the baseline and our adapter (the first
 * two clients, the pair the target compares) read each length back to back, so a burst of
 * load from elsewhere falls on both samples of a pair, and the peers follow.
 */
async function measure(
  clients: [string, ClientWorker][],
  kind: StreamKind,
): Promise<Map<string, ClientRounds>> {
  const rounds = new Map<string, ClientRounds>(
    clients.map(([name]) => [name, { long: [], short: [], ttfts: [], deltas: 0 }]),
  );
  const [pair, peers] = [clients.slice(0, 2), clients.slice(2)];
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const flip = <T>(items: T[]) => (round % 2 === 0 ? items : [...items].reverse());
    const sample = async ([name, client]: [string, ClientWorker], length: StreamLength) => {
      const run = await client.call(kind, length);
      if (round < WARMUP) return;
      const entry = rounds.get(name) as ClientRounds;
      entry[length].push(run.cpu_us);
      if (length === "long") {
        entry.ttfts.push(run.ttft_ms);
        entry.deltas = run.deltas;
      }
    };
    for (const length of flip(LENGTHS))
      for (const client of flip(pair)) await sample(client, length);
    for (const client of flip(peers))
      for (const length of flip(LENGTHS)) await sample(client, length);
  }
  return rounds;
}

const LENGTHS: StreamLength[] = ["long", "short"];

/** What a call costs whatever its length: the short stream less its chunks. */
const perCall = (entry: ClientRounds) =>
  leastDisturbed(entry.short) - SHORT_CHUNKS * cpuPerChunk(entry);

/**
 * The median of the per-round ratios of whole long streams: each round measures both clients
 * back to back, so a burst of load from another process spoils one pair, not the whole sum.
 */
function pairedRatio(ours: ClientRounds, baseline: ClientRounds): number {
  return median(ours.long.map((cpu, index) => cpu / (baseline.long[index] ?? Number.NaN)));
}

const signed = (value: number, digits: number) =>
  `${value >= 0 ? "+" : ""}${value.toFixed(digits)}`;

export async function runProviderBench(): Promise<Figure[]> {
  console.log(
    `\nprovider benchmark: ${LONG_CHUNKS}- and ${SHORT_CHUNKS}-chunk streams from a local server in a child process, ${ROUNDS} rounds after ${WARMUP} warm-up, each sample the mean of ${CALLS} calls`,
  );
  console.log(
    "  per chunk: (long - short) / the chunks between them, each the lower decile of its samples (the least disturbed); per call: the short stream less its chunks",
  );
  const { child, baseUrl } = await startStreamServer();
  const clients = CLIENTS.map(([name, client]): [string, ClientWorker] => [
    name,
    startWorker(client, baseUrl),
  ]);
  const figures: Figure[] = [];
  try {
    for (const kind of ["text", "tool", "reasoning"] as const) {
      const rounds = await measure(clients, kind);
      const entry = (name: string) => rounds.get(name) as ClientRounds;
      const ttft = (name: string) => median(entry(name).ttfts);
      const base = entry(BASELINE);
      console.log(`\n  ${kind} stream`);
      for (const [name] of CLIENTS) {
        const own = entry(name);
        console.log(
          `    ${name.padEnd(56)} ${cpuPerChunk(own).toFixed(2).padStart(6)} µs/chunk (${(cpuPerChunk(own) / cpuPerChunk(base)).toFixed(2)}x)` +
            `  ${perCall(own).toFixed(0).padStart(5)} µs/call (${signed(perCall(own) - perCall(base), 0)})` +
            `  TTFT ${ttft(name).toFixed(2)} ms (${signed(ttft(name) - ttft(BASELINE), 2)} ms)  deltas ${own.deltas}`,
        );
      }
      const ours = entry(OURS);
      const chunkRatio = cpuPerChunk(ours) / cpuPerChunk(base);
      const wholeRatio = pairedRatio(ours, base);
      console.log(
        `    adapter / baseline: ${chunkRatio.toFixed(2)}x per chunk; a whole ${LONG_CHUNKS}-chunk call ${wholeRatio.toFixed(2)}x (median of ${ROUNDS} paired rounds)`,
      );
      figures.push(
        {
          name: `openai adapter CPU per chunk, ${kind} stream (marginal)`,
          value: `${cpuPerChunk(ours).toFixed(2)} µs/chunk`,
          baseline: `${cpuPerChunk(base).toFixed(2)} µs/chunk (raw fetch + SSE parse + JSON.parse)`,
          ratio: chunkRatio,
          target: "<= 1.1x",
          met: chunkRatio <= 1.1,
        },
        {
          name: `openai adapter CPU of a whole ${LONG_CHUNKS}-chunk call, ${kind} stream (per-call cost included)`,
          value: `${(median(ours.long) / 1000).toFixed(2)} ms, of which ${perCall(ours).toFixed(0)} µs per call`,
          baseline: `${(median(base.long) / 1000).toFixed(2)} ms, ${perCall(base).toFixed(0)} µs per call`,
          ratio: wholeRatio,
          target: "<= 1.1x",
          met: wholeRatio <= 1.1,
        },
        {
          name: `openai adapter TTFT, ${kind} stream`,
          value: `${ttft(OURS).toFixed(2)} ms`,
          baseline: `${ttft(BASELINE).toFixed(2)} ms`,
          ratio: ttft(OURS) / ttft(BASELINE),
          target: "within 0.3 ms of the baseline",
          met: ttft(OURS) - ttft(BASELINE) <= 0.3,
        },
      );
    }
  } finally {
    for (const [, worker] of clients) worker.stop();
    child.stdin?.end();
    child.kill();
  }
  printFigures("Providers", figures);
  return figures;
}
