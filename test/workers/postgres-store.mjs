// A process using the PostgreSQL store from the built package, for the tests that need several
// processes (src/store/postgres/*.test.ts). Usage: node postgres-store.mjs DIST_DIR MODE URL ...
//   open: prints "ready", waits for a line on stdin (the test writes one to every process at
//     once), opens the store (migrating the database) and prints {"ok", "migrated"} or the error.
//   claim SESSION_ID LEASE_MS: opens the store with that lease, claims a turn of the session,
//     prints {"turn_index"} and stays alive holding it (its store renews the lease) until killed.
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [distDir, mode, url, ...rest] = process.argv.slice(2);
const { PostgresSessionStore } = await import(
  pathToFileURL(join(distDir, "store/postgres/postgres-session-store.js")).href
);
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

if (mode === "open") {
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write("ready\n");
  await lines.next();
  try {
    const store = await PostgresSessionStore.open(url, { pool_size: 1 });
    say({ ok: true, migrated: store.migrated });
    await store.close();
  } catch (error) {
    say({ ok: false, error: String(error?.message ?? error) });
  }
  process.exit(0);
} else if (mode === "claim") {
  const [sessionId, leaseMs] = rest;
  const store = await PostgresSessionStore.open(url, { lease_ms: Number(leaseMs) });
  const claimed = await store.claimTurn(sessionId, {
    user_message: "held by a process that will be killed",
    runner: `${process.pid}@another-host`,
  });
  say({ turn_index: claimed.turn_index });
  // The lease timer is unref'd (it never keeps a process alive): this one is kept alive on purpose.
  setInterval(() => {}, 60_000);
} else {
  say({ ok: false, error: `unknown mode ${mode}` });
  process.exit(2);
}
