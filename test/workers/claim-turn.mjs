// One of several processes starting turns on the same session at the same moments. Usage:
// node claim-turn.mjs DIST_DIR DB_PATH SESSION_ID LABEL. It opens the store and prints "ready";
// then each line on stdin (the test writes one to every process at once) starts one turn with the
// session's stored config, and one JSON line reports how it ended, or its refusal. Ends with stdin.
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [distDir, dbPath, sessionId, label] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(distDir, path)).href);
const { SqliteSessionStore } = await load("index.js");
const { runTurn } = await load("composition/run-turn.js");

const store = new SqliteSessionStore(dbPath);
process.stdout.write("ready\n");
for await (const round of createInterface({ input: process.stdin })) {
  let result;
  try {
    let end = null;
    const errors = [];
    for await (const event of runTurn({
      store,
      session_id: sessionId,
      message: `hello from ${label}, round ${round}`,
    })) {
      if (event.type === "turn_end") end = event;
      if (event.type === "error") errors.push(event);
    }
    result = { ran: true, turn_index: end?.turn_index, status: end?.status, errors };
  } catch (error) {
    result = { ran: false, code: error.code ?? null, message: error.message };
  }
  process.stdout.write(`${JSON.stringify({ label, round, ...result })}\n`);
}
store.close();
