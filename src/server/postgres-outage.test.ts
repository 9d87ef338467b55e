import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { createTestDatabase, type TestDatabase } from "../../test/postgres-database.js";
import { PostgresSessionStore } from "../store/postgres/postgres-session-store.js";
import { type RunningServer, startServer } from "./start-server.js";

/**
 * `serve` on PostgreSQL while the database is away (a restart, a network cut): the server stays
 * up, and every read answers 503 `storage_failed` saying the connection failed, not a 500 with a
 * stack trace in the log, nor a "refused the write" for a read.
 */

let database: TestDatabase;
let relay: { server: Server; sockets: Set<Socket>; port: number };
let store: PostgresSessionStore;
let lab: RunningServer;
let directory: ReturnType<typeof temporaryDirectory>;
const logs: string[] = [];

/** A TCP relay to the test database, so the test can take the database away. */
async function startRelay(target: URL): Promise<typeof relay> {
  const { port, hostname } = target;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return { server, sockets, port: typeof address === "object" && address ? address.port : 0 };
}

beforeEach(async () => {
  database = await createTestDatabase();
  const url = new URL(database.url);
  relay = await startRelay(url);
  url.port = String(relay.port);
  store = await PostgresSessionStore.open(url.href);
  await store.createSession({ session_id: "before", title: "before the outage" });
  directory = temporaryDirectory();
  lab = await startServer({
    store,
    port: 0,
    webRoot: join(directory.path, "no-web-build"),
    log: (line) => logs.push(line),
  });
});
afterEach(async () => {
  await lab.close();
  await store.close().catch(() => {});
  relay.server.close();
  directory.remove();
  await database.drop();
});

describe("serve on PostgreSQL while the database is away", () => {
  it("answers the lists and a session's reads 503 storage_failed, naming a failed connection", async () => {
    const get = (path: string) =>
      fetch(new URL(path, lab.url), { headers: { authorization: `Bearer ${lab.token}` } });
    expect((await get("/api/sessions?limit=5")).status).toBe(200);
    relay.server.close();
    for (const socket of relay.sockets) socket.destroy();
    logs.length = 0;
    for (const path of ["/api/sessions?limit=5", "/api/experiments", "/api/sessions/before"]) {
      const response = await get(path);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect([path, response.status, body.error.code]).toStrictEqual([path, 503, "storage_failed"]);
      expect(body.error.message).toMatch(/^the connection to the database failed: /);
    }
    expect(logs.join("\n")).not.toContain("unexpected failure");
  });
});
