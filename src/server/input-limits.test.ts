import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionRecord } from "../domain/records.js";
import { startTestServer, type TestServer } from "./test-fixtures.js";

/**
 * Issue 9, point 12: bad input stays a 4xx. A deeply nested config overflowed the stack (a 500);
 * a lone UTF-16 surrogate was stored as invalid UTF-8.
 */

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level += 1) value = { a: value };
  return value;
}

/** Deep nesting as raw JSON text, since building it as an object and stringifying it overflows. */
function deeplyNestedBody(depth: number): string {
  return `{"title":"deep","config":{"chat_agent":{"options":{"x":${"[".repeat(depth)}${"]".repeat(depth)}}}}}`;
}

const LONE = "\ud800";

describe("bad input stays a 4xx", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(async () => {
    await lab.close();
  });

  it("a config nested 100,000 levels deep is a 400 naming where, not a 500", async () => {
    const response = await lab.api("/api/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: deeplyNestedBody(100_000),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/nested deeper than \d+ levels \(at config\.chat_agent/);
    expect(lab.logs.join("\n")).not.toMatch(/Maximum call stack/);
  });

  it("a config nested past 64 levels is refused by the store API and HTTP, one within it is kept", async () => {
    expect(() => lab.store.createSession({ title: "deep", config: { x: nested(70) } })).toThrow(
      /createSession: config\.x\.a: nested deeper than 64 levels/,
    );
    const refused = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "deep", config: { x: nested(70) } },
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/config\.x\.a: nested deeper than 64 levels/);

    const kept = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "fine", config: { x: nested(40) } },
    });
    expect(kept.status).toBe(201);
  });

  it("audit details nested 100,000 levels deep are a clear error from the store API", () => {
    const id = lab.store.createSession({ title: "t", config: {} });
    let details: unknown = {};
    for (let level = 0; level < 100_000; level += 1) details = { a: details };
    expect(() =>
      lab.store.appendAudit(id, { event: "x", details: details as Record<string, unknown> }),
    ).toThrow(/appendAudit: details\.a\.a: nested deeper than 64 levels/);
  });

  it("a lone surrogate in a title, a config value or a user message is refused with the field named", async () => {
    expect(() => lab.store.createSession({ title: `a${LONE}b`, config: {} })).toThrow(
      /createSession: title: contains a lone UTF-16 surrogate/,
    );
    expect(() =>
      lab.store.createSession({ title: "t", config: { chat_agent: { system_prompt: LONE } } }),
    ).toThrow(/createSession: config\.chat_agent\.system_prompt: contains a lone UTF-16 surrogate/);

    // JSON.stringify writes the lone surrogate as the escape `\ud800`, as any client would.
    const title = await lab.api("/api/sessions", { method: "POST", json: { title: `a${LONE}` } });
    expect(title.status).toBe(400);
    expect(await title.text()).toMatch(/title: contains a lone UTF-16 surrogate/);
    const config = await lab.api("/api/sessions", {
      method: "POST",
      json: { title: "t", config: { chat_agent: { system_prompt: `x${LONE}` } } },
    });
    expect(config.status).toBe(400);
    expect(await config.text()).toMatch(
      /config\.chat_agent\.system_prompt: contains a lone UTF-16 surrogate/,
    );

    const created = await lab.api("/api/sessions", { method: "POST", json: { title: "ok" } });
    const { id } = ((await created.json()) as { session: SessionRecord }).session;
    const turn = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message: `hi ${LONE}` },
    });
    expect(turn.status).toBe(400);
    expect(await turn.text()).toMatch(/message: contains a lone UTF-16 surrogate/);
    expect(() => lab.store.startTurn(id, { turn_index: 1, user_message: LONE })).toThrow(
      /startTurn: user_message: contains a lone UTF-16 surrogate/,
    );
    expect(lab.store.listTurns(id)).toHaveLength(0);
  });

  it("a lone surrogate in what a model wrote is stored as U+FFFD, and the file is valid UTF-8", () => {
    const id = lab.store.createSession({ title: "t", config: {} });
    lab.store.startTurn(id, { turn_index: 1, user_message: "hi" });
    lab.store.appendMessage(id, {
      turn_index: 1,
      message: { role: "assistant", content: `half an emoji: \ud83d|${LONE}|😀` },
    });
    lab.store.appendAudit(id, { event: "x", details: { text: `\udc00 tail` } });
    expect(lab.store.listMessages(id).at(-1)?.content).toBe("half an emoji: \ufffd|\ufffd|😀");
    expect(lab.store.listAuditLogs(id).at(-1)?.details).toStrictEqual({ text: "\ufffd tail" });

    // The bytes SQLite holds, read raw: each must decode as strict UTF-8.
    const raw = new Database(lab.store.path, { readonly: true });
    try {
      const blobs = raw
        .prepare(
          `SELECT CAST(content AS BLOB) AS bytes FROM messages
           UNION ALL SELECT CAST(details_json AS BLOB) FROM audit_logs`,
        )
        .all() as { bytes: Buffer }[];
      expect(blobs.length).toBeGreaterThan(1);
      for (const { bytes } of blobs) {
        expect(() => new TextDecoder("utf-8", { fatal: true }).decode(bytes)).not.toThrow();
      }
    } finally {
      raw.close();
    }
  });
});
