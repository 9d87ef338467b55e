// A process that dies mid-turn. Usage: node crash-turn.mjs DIST_DIR DB_PATH SESSION_ID MODE.
// It runs one turn of "search for sqlite wal mode" on the built package with the simulated model;
// its mock_search never finishes: once it has started, the process prints "mid-turn" and waits
// for the test to kill it (SIGKILL), so the turn is left "running" with a tool call in flight.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [distDir, dbPath, sessionId, mode] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(distDir, path)).href);
const { SqliteSessionStore } = await load("index.js");
const { runTurn } = await load("composition/run-turn.js");
const { createBuiltinTools } = await load("tools/builtin/index.js");

const [search, ticket] = createBuiltinTools();
const stuckSearch = {
  ...search,
  timeout_ms: 60_000,
  execute: (_args, { signal }) =>
    new Promise((_resolve, reject) => {
      process.stdout.write("mid-turn\n");
      const timer = setTimeout(() => reject(new Error("never killed")), 60_000);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    }),
};

const store = new SqliteSessionStore(dbPath);
for await (const event of runTurn({
  store,
  session_id: sessionId,
  message: "search for sqlite wal mode",
  config: { tool_invocation_mode: mode },
  tools: [stuckSearch, ticket],
})) {
  if (event.type === "turn_end") process.stdout.write(`turn_end ${event.status}\n`);
}
store.close();
