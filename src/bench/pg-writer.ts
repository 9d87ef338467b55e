import { createInterface } from "node:readline";
import { openSessionStore } from "../store/open-store.js";
import { appendBenchCall } from "./pg-append-call.js";

/**
 * One of the PostgreSQL benchmark's concurrent writers, a process of its own: opens the store at
 * the URL in $AGENT_LAB_BENCH_PG_URL (never in argv, where `ps` shows it), says `ready`, waits
 * for `go` on stdin, then appends its own `count` calls and tries every one of the `shared`
 * calls all writers share (idempotent by metric key: one of them stores each), one at a time,
 * interleaved. Answers one JSON line: how many appends stored a row, and the time it took.
 */
const [writer, count, shared] = process.argv.slice(2).map(Number);
const url = process.env.AGENT_LAB_BENCH_PG_URL;
if (url === undefined || writer === undefined || count === undefined || shared === undefined) {
  console.error("usage: AGENT_LAB_BENCH_PG_URL=… pg-writer WRITER COUNT SHARED");
  process.exit(2);
}
const store = await openSessionStore(url, {
  application_name: `pg-bench-writer-${writer}`,
  pool_size: 1,
});
const lines = createInterface({ input: process.stdin });
console.log("ready");
for await (const line of lines) if (line.trim() === "go") break;
const call = (key: string) => appendBenchCall(store, "writers", key);
let stored = 0;
const start = performance.now();
const every = Math.max(1, Math.floor(count / Math.max(1, shared)));
let nextShared = 0;
for (let index = 0; index < count; index++) {
  if ((await call(`w${writer}:${index}`)) === true) stored++;
  if (index % every === 0 && nextShared < shared) {
    if ((await call(`shared:${nextShared}`)) === true) stored++;
    nextShared++;
  }
}
while (nextShared < shared) {
  if ((await call(`shared:${nextShared}`)) === true) stored++;
  nextShared++;
}
console.log(JSON.stringify({ stored, ms: performance.now() - start }));
lines.close();
await store.close();
