import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { countFromEnv, type Figure, median, printFigures } from "./measure.js";
import { startStreamServer } from "./provider-bench.js";
import {
  cpuPerChunk,
  LONG_CHUNKS,
  perChunk,
  SHORT_CHUNKS,
  type StreamLength,
} from "./provider-stream-bodies.js";

/**
 * What the gateway adds for an agent that points its openai client at the lab instead of at its
 * endpoint: the same client, the same upstream (the provider bench's local stream server, in a
 * child process), streamed once directly and once through `/v1/chat/completions` in pass-through,
 * turn after turn. The lab runs in a process of its own (gateway-bench-server.ts), as `serve` does;
 * the CPU through the gateway is the client's and the lab's together (recording included), against
 * the client's alone. Run twice: payloads kept (`auto` for a local endpoint) and not (`auto` for a
 * hosted one).
 */

/**
 * The rounds of a run, read when the gateway bench starts (a bad knob stops this part only).
 * `warmup` (AGENT_LAB_GATEWAY_WARMUP) come before the measured ones: a gateway serves requests
 * for hours, and V8 compiles its request path over the first few hundred. After 10 rounds CPU
 * per chunk read 1.16-1.20x, after 300 1.10-1.18x; the added time to first token, +1.47 to +1.76
 * ms against +1.28 to +1.75, moved less than the hour moves it (two runs each, 3 December).
 * `rounds` (AGENT_LAB_GATEWAY_ROUNDS): at 40, the paired ratio moved by ±0.05 between runs; at
 * 100, three runs in a row agreed within 0.03.
 */
function runSize(): { warmup: number; rounds: number } {
  return {
    warmup: countFromEnv("AGENT_LAB_GATEWAY_WARMUP", 200, 0),
    rounds: countFromEnv("AGENT_LAB_GATEWAY_ROUNDS", 100),
  };
}

interface Run {
  cpu_us: number;
  /** The lab's share of `cpu_us` (0 without the gateway). */
  lab_us: number;
  ttft_ms: number;
  deltas: number;
}

/** The lab in its child process, asked for its CPU time around each call. */
interface LabProcess {
  url: string;
  cpu(): Promise<number>;
  stop(): void;
}

/**
 * A floor in its own process: the bare node:http proxy (bare-proxy-server.ts) or the TCP relay
 * (gateway-tcp-relay.ts).
 */
function startFloor(
  upstreamUrl: string,
  file = "./bare-proxy-server.js",
): Promise<{ url: string; stop(): void }> {
  const script = fileURLToPath(new URL(file, import.meta.url));
  const child = fork(script, [upstreamUrl], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("message", (message: { url: string }) =>
      resolve({ url: message.url, stop: () => child.disconnect() }),
    );
  });
}

function startLab(upstreamUrl: string, payloads: "auto" | "off"): Promise<LabProcess> {
  const script = fileURLToPath(new URL("./gateway-bench-server.js", import.meta.url));
  const child = fork(script, [upstreamUrl, payloads], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting: ((cpu: number) => void)[] = [];
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.on("message", (message: { url?: string; cpu_us?: number }) => {
      if (message.cpu_us !== undefined) waiting.shift()?.(message.cpu_us);
      if (message.url === undefined) return;
      resolve({
        url: message.url,
        cpu: () =>
          new Promise((answer) => {
            waiting.push(answer);
            child.send("cpu");
          }),
        stop: () => child.disconnect(),
      });
    });
  });
}

async function stream(
  client: OpenAI,
  model: string,
  length: StreamLength,
  lab: LabProcess | null,
): Promise<Run> {
  const labBefore = lab === null ? 0 : await lab.cpu();
  const before = process.cpuUsage();
  const start = performance.now();
  let ttft = -1;
  let deltas = 0;
  const response = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content: length === "short" ? "hi, short" : "hi" }],
    stream: true,
  });
  for await (const chunk of response) {
    if (chunk.choices[0]?.delta.content) {
      if (ttft < 0) ttft = performance.now() - start;
      deltas++;
    }
  }
  const used = process.cpuUsage(before);
  const labUsed = lab === null ? 0 : (await lab.cpu()) - labBefore;
  return { cpu_us: used.user + used.system + labUsed, lab_us: labUsed, ttft_ms: ttft, deltas };
}

interface Side {
  long: number[];
  short: number[];
  /** The lab's CPU alone, per call (zeros but for the gateway). */
  lab: { long: number[]; short: number[] };
  ttfts: number[];
  deltas: number;
}

export async function runGatewayBench(): Promise<Figure[]> {
  const size = runSize();
  console.log(
    `\ngateway benchmark: the openai client streaming ${LONG_CHUNKS}- and ${SHORT_CHUNKS}-chunk answers directly and through the gateway (pass-through, every turn recorded), ${size.rounds} rounds after ${size.warmup} warm-up`,
  );
  const upstream = await startStreamServer();
  const proxy = await startFloor(upstream.baseUrl);
  const relay = await startFloor(upstream.baseUrl, "./gateway-tcp-relay.js");
  const figures: Figure[] = [];
  try {
    for (const payloads of ["off", "auto"] as const) {
      figures.push(
        ...(await measure(
          upstream.baseUrl,
          { proxy: proxy.url, relay: relay.url },
          payloads,
          size,
        )),
      );
    }
  } finally {
    proxy.stop();
    relay.stop();
    upstream.child.stdin?.end();
    upstream.child.kill();
  }
  printFigures("Gateway", figures);
  return figures;
}

async function measure(
  upstreamUrl: string,
  floors: { proxy: string; relay: string },
  payloads: "auto" | "off",
  { warmup, rounds }: { warmup: number; rounds: number },
): Promise<Figure[]> {
  const lab = await startLab(upstreamUrl, payloads);
  const direct = new OpenAI({ baseURL: upstreamUrl, apiKey: "bench", maxRetries: 0 });
  // One agent run: its requests share a session, as a client naming it (or resending its
  // conversation) gets.
  const gateway = new OpenAI({
    baseURL: `${lab.url}v1`,
    apiKey: "none",
    maxRetries: 0,
    defaultHeaders: { "X-Agent-Lab-Session": `bench-${payloads}` },
  });
  const proxied = new OpenAI({ baseURL: floors.proxy, apiKey: "bench", maxRetries: 0 });
  const relayed = new OpenAI({ baseURL: floors.relay, apiKey: "bench", maxRetries: 0 });
  const sides: Record<"direct" | "gateway" | "proxy" | "relay", Side> = {
    direct: { long: [], short: [], lab: { long: [], short: [] }, ttfts: [], deltas: 0 },
    gateway: { long: [], short: [], lab: { long: [], short: [] }, ttfts: [], deltas: 0 },
    proxy: { long: [], short: [], lab: { long: [], short: [] }, ttfts: [], deltas: 0 },
    relay: { long: [], short: [], lab: { long: [], short: [] }, ttfts: [], deltas: 0 },
  };
  const runners: [keyof typeof sides, (length: StreamLength) => Promise<Run>][] = [
    ["direct", (length) => stream(direct, "bench-model", length, null)],
    ["gateway", (length) => stream(gateway, "bench", length, lab)],
    ["proxy", (length) => stream(proxied, "bench-model", length, null)],
    ["relay", (length) => stream(relayed, "bench-model", length, null)],
  ];
  try {
    for (let round = 0; round < warmup + rounds; round++) {
      const order = round % 2 === 0 ? runners : [...runners].reverse();
      for (const [name, run] of order) {
        for (const length of ["long", "short"] as const) {
          const result = await run(length);
          if (round < warmup) continue;
          const side = sides[name];
          side[length].push(result.cpu_us);
          side.lab[length].push(result.lab_us);
          if (length === "long") {
            side.ttfts.push(result.ttft_ms);
            side.deltas = result.deltas;
          }
        }
      }
    }
  } finally {
    lab.stop();
  }
  const { direct: alone, gateway: through, proxy, relay } = sides;
  const paired = pairedChunkRatio(through, alone);
  const chunkRatio = cpuPerChunk(through) / cpuPerChunk(alone);
  const addedTtft = pairedAddedTtft(through, alone);
  const proxyAddedTtft = pairedAddedTtft(proxy, alone);
  const relayAddedTtft = pairedAddedTtft(relay, alone);
  // The difference of the run's medians, as this figure was taken before 4 December, 18:24: printed beside
  // the paired one so the two can be compared.
  const unpairedTtft = median(through.ttfts) - median(alone.ttfts);
  const callAdded = median(through.short) - median(alone.short);
  const kept = payloads === "off" ? "payloads not kept" : "payloads kept (auto, local upstream)";
  console.log(`\n  ${kept}`);
  console.log(
    `    direct   ${cpuPerChunk(alone).toFixed(2)} µs/chunk, ${(median(alone.short) / 1000).toFixed(2)} ms CPU per ${SHORT_CHUNKS}-chunk call, TTFT ${median(alone.ttfts).toFixed(2)} ms, deltas ${alone.deltas}`,
  );
  console.log(
    `    gateway  ${cpuPerChunk(through).toFixed(2)} µs/chunk, ${(median(through.short) / 1000).toFixed(2)} ms CPU per ${SHORT_CHUNKS}-chunk call (+${(callAdded / 1000).toFixed(2)} ms: the lab's turn), of which the lab ${cpuPerChunk(through.lab).toFixed(2)} µs/chunk, TTFT ${median(through.ttfts).toFixed(2)} ms, deltas ${through.deltas}`,
  );
  console.log(
    `    paired by round (the median of each round's gateway per chunk over its direct, drift cancels): ${paired.toFixed(2)}x; added time to first token ${signed(addedTtft)} ms (the medians' difference: ${signed(unpairedTtft)} ms)`,
  );
  console.log(
    `    bare node:http proxy (records nothing; the floor of any gateway)  client ${cpuPerChunk(proxy).toFixed(2)} µs/chunk, TTFT ${median(proxy.ttfts).toFixed(2)} ms (${signed(proxyAddedTtft)} ms), deltas ${proxy.deltas}`,
  );
  console.log(
    `    TCP relay (parses no HTTP; the cost of one more local hop)  client ${cpuPerChunk(relay).toFixed(2)} µs/chunk, TTFT ${median(relay.ttfts).toFixed(2)} ms (${signed(relayAddedTtft)} ms), deltas ${relay.deltas}`,
  );
  return [
    {
      // The ratio of record is paired by round: the medians of the two sides, taken over the
      // whole run, compare the client's CPU at different moments, and that moved by 15% between
      // the two halves of one run (the direct client at 7.5 and 8.8 µs a chunk).
      name: `gateway CPU per chunk, client + lab against the client alone, paired by round (pass-through, ${kept})`,
      value: `${cpuPerChunk(through).toFixed(2)} µs/chunk (lower decile of the run; ${chunkRatio.toFixed(2)}x the direct lower decile)`,
      baseline: `${cpuPerChunk(alone).toFixed(2)} µs/chunk (openai client, directly)`,
      ratio: paired,
      target: "<= 1.2x",
      met: paired <= 1.2,
    },
    {
      name: `gateway added time to first token, paired by round (${kept})`,
      value: `${median(through.ttfts).toFixed(2)} ms (${signed(addedTtft)} ms, the median of each round's gateway TTFT less its direct one; the medians' difference ${signed(unpairedTtft)} ms)`,
      baseline: `${median(alone.ttfts).toFixed(2)} ms (openai client, directly); through a bare node:http proxy ${median(proxy.ttfts).toFixed(2)} ms (${signed(proxyAddedTtft)} ms), a TCP relay ${median(relay.ttfts).toFixed(2)} ms (${signed(relayAddedTtft)} ms)`,
      // The paired figure over the direct median: the ratio says what `met` judges.
      ratio: (median(alone.ttfts) + addedTtft) / median(alone.ttfts),
      target: "<= 1 ms added",
      met: addedTtft <= 1,
    },
  ];
}

/**
 * The median over rounds of one side's time to first token less the baseline's in the same round:
 * each round runs every side once (in an order reversed every other round), so a slow minute of
 * the machine (these are shared) slows both calls of a pair and drops out of their difference, as
 * it does from the paired CPU ratio. The pairs are a few calls apart, not back to back: the
 * gateway's long call and the direct one have one short call between them, the proxy's and the
 * relay's up to five, so the floors' differences cancel less drift than the gateway's.
 */
function pairedAddedTtft(side: Side, baseline: Side): number {
  const added: number[] = [];
  for (let round = 0; round < side.ttfts.length; round++) {
    added.push((side.ttfts[round] as number) - (baseline.ttfts[round] as number));
  }
  return median(added);
}

/** A difference in milliseconds with its sign: "+1.20", "-0.12". */
function signed(ms: number): string {
  return `${ms < 0 ? "-" : "+"}${Math.abs(ms).toFixed(2)}`;
}

/**
 * The median over rounds of one side's CPU per chunk against another's in the same round: the
 * machine's speed drifts during a run (the same client's figure moved 2x between runs), and a
 * ratio taken within a round cancels what both sides met.
 */
function pairedChunkRatio(side: Side, baseline: Side): number {
  const ratios: number[] = [];
  for (let round = 0; round < side.long.length; round++) {
    const chunkOf = (of: Side) => perChunk(of.long[round] as number, of.short[round] as number);
    const base = chunkOf(baseline);
    if (base > 0) ratios.push(chunkOf(side) / base);
  }
  return median(ratios);
}
