import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { startServer } from "../server/start-server.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import {
  CALLS_PER_TURN,
  cached,
  callsFixture,
  callsSessionId,
  fixtureKey,
  scaleSessionId,
  sessionsFixture,
} from "./scale-fixtures.js";
import { TEMPLATE_COUNT, templateShape } from "./scale-templates.js";

const folders: { remove(): void }[] = [];
function folder(): string {
  const made = temporaryDirectory();
  folders.push(made);
  return made.path;
}
afterEach(() => {
  for (const made of folders.splice(0)) made.remove();
});

const SESSIONS = 2 * TEMPLATE_COUNT + 4;

describe("scale fixtures", () => {
  it("clones the template sessions into a file the store and the API read like any other", async () => {
    const directory = folder();
    const fixture = await sessionsFixture(SESSIONS, directory);
    expect(fixture.built_ms).toBeGreaterThan(0);

    const store = new SqliteSessionStore(fixture.path);
    try {
      const listed = store.listSessionOverviews();
      expect(listed).toHaveLength(SESSIONS);
      // Session i is a clone of template i % 48, so clones of one template hold the same rows.
      const first = scaleSessionId(0);
      const again = scaleSessionId(TEMPLATE_COUNT);
      expect(store.listMessages(again).map((m) => [m.role, m.content])).toEqual(
        store.listMessages(first).map((m) => [m.role, m.content]),
      );
      expect(store.listAuditLogs(again).map((a) => a.event)).toEqual(
        store.listAuditLogs(first).map((a) => a.event),
      );
      expect(store.listMessages(first).length).toBeGreaterThan(0);
      expect(store.usageRollups(first).session.call_count).toBeGreaterThan(0);

      for (let index = 0; index < TEMPLATE_COUNT; index++) {
        const shape = templateShape(index);
        const session = store.getSession(scaleSessionId(index));
        expect(session?.title).toBe(`${shape.title} ${index}`);
        expect(session?.config).toMatchObject({
          tool_invocation_mode: shape.mode,
          tags: [...shape.tags],
        });
        const turns = store.listTurns(scaleSessionId(index));
        if (shape.status === "none") expect(turns).toEqual([]);
        else expect(turns.at(-1)?.status).toBe(shape.status);
        // Every timestamp moved with the clone: no turn starts before its session.
        for (const turn of turns) {
          expect(turn.started_at >= (session?.created_at ?? "")).toBe(true);
        }
      }
      // Experiment templates' clones carry their own experiment id, indexed like any other run.
      const tagged = store.findSessionsByExperiment("exp-000");
      expect(tagged.length).toBeGreaterThan(0);
      expect(
        tagged.every(
          (session) => templateShape(Number(session.id.slice(2)) % TEMPLATE_COUNT).experiment,
        ),
      ).toBe(true);

      // The filters' tables (tags, last status, title search) hold the clones as the store's own.
      const expected = (
        keep: (shape: ReturnType<typeof templateShape>, index: number) => boolean,
      ) =>
        Array.from({ length: SESSIONS }, (_, index) => index)
          .filter((index) => keep(templateShape(index % TEMPLATE_COUNT), index))
          .map(scaleSessionId)
          .reverse();
      const page = (query: Record<string, string>) =>
        store.listSessionPage({ limit: 500, ...query }).sessions.map((session) => session.id);
      expect(page({ tag: "nightly" })).toEqual(expected((shape) => shape.tags.includes("nightly")));
      expect(page({ status: "failed" })).toEqual(expected((shape) => shape.status === "failed"));
      expect(page({ status: "none" })).toEqual(expected((shape) => shape.status === "none"));
      expect(page({ mode: "chat_agent_tools" })).toEqual(
        expected((shape) => shape.mode === "chat_agent_tools"),
      );
      expect(page({ q: "triage 4" })).toEqual(
        expected((shape, index) => `${shape.title} ${index}`.toLowerCase().includes("triage 4")),
      );

      const server = await startServer({ store, port: 0, host: "127.0.0.1", log: () => {} });
      try {
        const response = await fetch(
          new URL("/api/sessions?limit=500&include=experiments", server.url),
          {
            headers: { authorization: `Bearer ${server.token}` },
          },
        );
        expect(response.status).toBe(200);
        const body = (await response.json()) as { sessions: { id: string }[] };
        expect(body.sessions).toHaveLength(SESSIONS);
        expect(body.sessions[0]?.id).toBe(scaleSessionId(SESSIONS - 1));
      } finally {
        await server.close();
      }
    } finally {
      store.close();
    }

    // The second request for the same size is served from the cache.
    expect(await sessionsFixture(SESSIONS, directory)).toEqual({
      path: fixture.path,
      built_ms: null,
    });
  });

  it("writes a session of N calls in turns of CALLS_PER_TURN", async () => {
    const calls = 2 * CALLS_PER_TURN + 10;
    const fixture = await callsFixture([calls], folder());
    const store = new SqliteSessionStore(fixture.path);
    try {
      const id = callsSessionId(calls);
      const rollups = store.usageRollups(id);
      expect(rollups.session.call_count).toBe(calls);
      expect(rollups.turns.map((turn) => turn.call_count)).toEqual([
        CALLS_PER_TURN,
        CALLS_PER_TURN,
        10,
      ]);
      expect(store.listTurns(id)).toHaveLength(3);
      expect(store.listSessions().find((session) => session.id === id)?.turn_count).toBe(3);
    } finally {
      store.close();
    }
  });

  it("never gives a half-built file its name, and builds it again on the next call", async () => {
    const directory = folder();
    const path = join(directory, fixtureKey(), "broken.sqlite3");
    await expect(
      cached(directory, "broken", (partial) => {
        new SqliteSessionStore(partial).close();
        throw new Error("disk full");
      }),
    ).rejects.toThrow("disk full");
    expect(existsSync(path)).toBe(false);
    const built = await cached(directory, "broken", (partial) => {
      new SqliteSessionStore(partial).close();
    });
    expect(built).toEqual({ path, built_ms: expect.any(Number) });
    expect(existsSync(path)).toBe(true);
  });
});
