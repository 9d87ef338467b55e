import { runBfclBench } from "./bfcl-bench.js";
import { runGatewayBench } from "./gateway-bench.js";
import type { Figure } from "./measure.js";
import { runOtelBench } from "./otel-bench.js";
import { runPgBench } from "./pg-bench.js";
import { runProviderBench } from "./provider-bench.js";
import { runRuntimeBench } from "./runtime-bench.js";
import { runScaleBench } from "./scale-bench.js";
import { runServerBench } from "./server-bench.js";
import { runStoreBench } from "./store-bench.js";
import { runToolsBench } from "./tools-bench.js";
import { runWorkersBench } from "./workers-bench.js";

/**
 * `npm run bench [store|providers|runtime|server|tools|scale|bfcl|gateway|otel|pg|workers]...`: every benchmark but `scale`, `pg` and `workers` by
 * default, each figure a ratio against a baseline measured in the same run. `scale` builds
 * databases of up to 100,000 sessions and a million calls (minutes, ~1.7 GB of temp space), so it
 * runs when named.
 */
const suites: Record<string, () => Figure[] | Promise<Figure[]>> = {
  store: runStoreBench,
  providers: runProviderBench,
  runtime: runRuntimeBench,
  server: runServerBench,
  tools: runToolsBench,
  scale: runScaleBench,
  bfcl: runBfclBench,
  gateway: runGatewayBench,
  workers: runWorkersBench,
  otel: runOtelBench,
  pg: runPgBench,
};
const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !(name in suites));
if (unknown.length > 0) {
  console.error(
    `unknown benchmark(s): ${unknown.join(", ")}; choose from ${Object.keys(suites).join(", ")}`,
  );
  process.exit(2);
}
const figures: Figure[] = [];
// pg starts its own PostgreSQL (the server binaries must be installed) and builds 100,000 sessions;
// workers times agent-lab bench on 1, 2 and 4 workers (minutes).
const everyday = Object.keys(suites).filter(
  (name) => name !== "scale" && name !== "pg" && name !== "workers",
);
for (const name of chosen.length > 0 ? chosen : everyday) {
  figures.push(...(await (suites[name] as () => Figure[] | Promise<Figure[]>)()));
}
const missed = figures.filter((figure) => !figure.met);
console.log(
  missed.length === 0
    ? "\nall targets met"
    : `\n${missed.length} target(s) missed: ${missed.map((figure) => figure.name).join("; ")}`,
);
