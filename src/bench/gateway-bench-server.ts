import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LabConfigFile } from "../domain/tool-sources.js";
import { startServer } from "../server/start-server.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

/**
 * The lab of the gateway benchmark, in a process of its own as `agent-lab serve` runs: a client's
 * time to first token must not wait on the lab's bookkeeping in a shared event loop. Started with
 * the upstream's base URL and whether to keep payloads; sends `{ url }` when listening and answers
 * every `cpu` message with this process's CPU time so far (µs).
 */
const [baseUrl, payloads] = process.argv.slice(2);
const folder = mkdtempSync(join(tmpdir(), "agent-lab-gateway-bench-"));
const store = new SqliteSessionStore(join(folder, "lab.sqlite3"));
const lab = await startServer({
  store,
  port: 0,
  token: false,
  webRoot: join(folder, "no-web"),
  log: () => {},
  runTurnDefaults: {
    labConfig: LabConfigFile.parse({
      upstreams: { bench: { base_url: baseUrl, model: "bench-model", capture: payloads } },
    }),
    env: {},
  },
});
process.on("message", (message) => {
  if (message === "cpu") {
    const used = process.cpuUsage();
    process.send?.({ cpu_us: used.user + used.system });
  }
});
process.on("disconnect", async () => {
  await lab.close();
  store.close();
  rmSync(folder, { recursive: true, force: true });
  process.exit(0);
});
process.send?.({ url: lab.url });
