import { createInterface } from "node:readline";
import {
  agentLabClient,
  aiSdkClient,
  type BenchClientFactory,
  openaiNodeClient,
  rawFetchClient,
  type StreamKind,
} from "./provider-clients.js";
import type { StreamLength } from "./provider-stream-bodies.js";

/**
 * One client of the provider benchmark in a process of its own: the garbage a heavy client leaves
 * (the AI SDK's is 40 times the baseline's) is collected on its own CPU time, not on whichever
 * client happens to run next. Reads `KIND LENGTH COUNT` lines, makes COUNT calls back to back and
 * answers with their mean CPU time as measured in this process (and the last call's TTFT), as a
 * JSON line.
 */
const BENCH_CLIENTS: Record<string, BenchClientFactory> = {
  raw: rawFetchClient,
  lab: agentLabClient,
  "openai-node": openaiNodeClient,
  "ai-sdk": aiSdkClient,
};

const [name, baseUrl] = process.argv.slice(2);
const factory = BENCH_CLIENTS[name ?? ""];
if (!factory || !baseUrl) {
  console.error("usage: provider-bench-worker CLIENT BASE_URL");
  process.exit(2);
}
const client = factory(baseUrl);
for await (const line of createInterface({ input: process.stdin })) {
  const [kind, length, count] = line.split(" ") as [StreamKind, StreamLength, string];
  const calls = Number(count);
  const before = process.cpuUsage();
  let run = await client(kind, length);
  for (let call = 1; call < calls; call++) run = await client(kind, length);
  const used = process.cpuUsage(before);
  process.stdout.write(
    `${JSON.stringify({ cpu_us: (used.user + used.system) / calls, ...run })}\n`,
  );
}
