import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../domain/errors.js";
import { ToolRegistry } from "../registry.js";
import { createBuiltinTools, mockSearch, mockTicket } from "./index.js";

const registry = (latency_ms?: number) =>
  new ToolRegistry(createBuiltinTools(latency_ms === undefined ? {} : { latency_ms }));

describe("createBuiltinTools", () => {
  it("gives mock_search and mock_ticket with usable descriptions and the agreed schemas", () => {
    const definitions = registry().definitions();
    expect(definitions.map((definition) => definition.name)).toEqual([
      "mock_search",
      "mock_ticket",
    ]);
    for (const definition of definitions) expect(definition.description.length).toBeGreaterThan(40);
    expect(definitions[0]?.parameters).toMatchObject({
      type: "object",
      properties: {
        query: { type: "string", minLength: 1 },
        limit: { type: "integer", minimum: 1, maximum: 10 },
      },
      required: ["query"],
      additionalProperties: false,
    });
    expect(definitions[1]?.parameters).toMatchObject({
      type: "object",
      properties: {
        title: { type: "string", minLength: 1 },
        priority: { type: "string", enum: ["low", "normal", "high"] },
        body: { type: "string" },
      },
      required: ["title"],
      additionalProperties: false,
    });
  });

  it("refuses a negative or non-finite latency", () => {
    expect(() => createBuiltinTools({ latency_ms: -1 })).toThrow(InvalidInputError);
    expect(() => createBuiltinTools({ latency_ms: Number.NaN })).toThrow(/latency_ms/);
  });

  it("validates the built-ins' arguments with readable errors", () => {
    const tools = registry();
    expect(tools.validate("mock_search", { query: "", limit: 11 })).toEqual({
      ok: false,
      error: "limit: must be <= 10; query: must not be empty",
    });
    expect(tools.validate("mock_ticket", { priority: "asap", due: "friday" })).toEqual({
      ok: false,
      error:
        "due: is not allowed (allowed: title, priority, body); " +
        'priority: must be one of "low", "normal", "high"; title: is required',
    });
  });
});

describe("mock_search", () => {
  it("returns `limit` results (3 by default) derived from the query", async () => {
    const tools = registry();
    const result = await tools.run("mock_search", { query: "SQLite WAL mode" });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const value = result.value as ReturnType<typeof mockSearch>;
    expect(value.query).toBe("SQLite WAL mode");
    expect(value.results).toHaveLength(3);
    const [first] = value.results;
    expect(first?.id).toMatch(/^doc-[0-9a-f]{8}-1$/);
    expect(first?.title).toContain("SQLite WAL mode");
    expect(first?.url).toMatch(/^https:\/\/example\.com\/docs\/sqlite-wal-mode-[0-9a-f]{8}\/1$/);
    expect(first?.snippet).toContain("SQLite WAL mode");
    expect(new Set(value.results.map((item) => item.id)).size).toBe(3);

    const ten = await tools.run("mock_search", { query: "SQLite WAL mode", limit: 10 });
    expect(ten.ok && (ten.value as ReturnType<typeof mockSearch>).results).toHaveLength(10);
  });

  it("is deterministic: the same arguments give the same results, other queries others", async () => {
    const tools = registry();
    const a = await tools.run("mock_search", { query: "prefix caching", limit: 5 });
    const b = await registry().run("mock_search", { query: "prefix caching", limit: 5 });
    const other = await tools.run("mock_search", { query: "token budgets", limit: 5 });
    expect(a.ok && a.value).toEqual(b.ok && b.value);
    expect(a.ok && a.value).toEqual(mockSearch("prefix caching", 5));
    expect(mockSearch("prefix caching", 2).results).toEqual(
      mockSearch("prefix caching", 5).results.slice(0, 2),
    );
    expect(other.ok && other.value).not.toEqual(a.ok && a.value);
  });

  it("keeps urls safe for odd queries", () => {
    const { results } = mockSearch("  ¿Qué es  WAL? / ../etc  ", 1);
    expect(results[0]?.url).toMatch(/^https:\/\/example\.com\/docs\/[a-z0-9-]+-[0-9a-f]{8}\/1$/);
    expect(mockSearch("!!!", 1).results[0]?.url).toMatch(/\/docs\/item-[0-9a-f]{8}\/1$/);
  });
});

describe("mock_ticket", () => {
  it("opens a ticket numbered from its title, with priority normal by default", async () => {
    const tools = registry();
    const result = await tools.run("mock_ticket", { title: "Login page is blank" });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const ticket = result.value as ReturnType<typeof mockTicket>;
    expect(ticket).toEqual({
      ticket_id: expect.stringMatching(/^TCK-\d{6}$/),
      title: "Login page is blank",
      priority: "normal",
      status: "open",
      url: `https://example.com/tickets/${ticket.ticket_id}`,
    });
  });

  it("is deterministic: the same title gives the same ticket number", async () => {
    const tools = registry();
    const a = await tools.run("mock_ticket", { title: "Crash on save", priority: "high" });
    const b = await tools.run("mock_ticket", {
      title: "Crash on save",
      priority: "high",
      body: "Steps: open, save.",
    });
    expect(a.ok && a.value).toEqual(b.ok && b.value);
    expect(a.ok && a.value).toMatchObject({ priority: "high" });
    expect(mockTicket("Crash on save").ticket_id).toBe(mockTicket("Crash on save").ticket_id);
    expect(mockTicket("Crash on save").ticket_id).not.toBe(mockTicket("Crash on load").ticket_id);
  });
});

describe("built-in latency", () => {
  it("is honoured: a 50 ms latency gives latency_ms >= 50", async () => {
    const tools = registry(50);
    for (const [name, args] of [
      ["mock_search", { query: "q" }],
      ["mock_ticket", { title: "t" }],
    ] as const) {
      const result = await tools.run(name, args);
      expect(result.ok).toBe(true);
      expect(result.latency_ms).toBeGreaterThanOrEqual(50);
      expect(result.latency_ms).toBeLessThan(1_000);
    }
  });

  it("is cut short by the caller's abort", async () => {
    const tools = registry(10_000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const startedAt = performance.now();
    const result = await tools.run("mock_search", { query: "q" }, { signal: controller.signal });
    expect(result).toMatchObject({ ok: false, kind: "interrupted" });
    expect(performance.now() - startedAt).toBeLessThan(1_000);
  });

  it("rejects at once, with the signal's reason, when the tool's own signal aborts", async () => {
    const [search, ticket] = createBuiltinTools({ latency_ms: 10_000 });
    for (const tool of [search, ticket]) {
      const controller = new AbortController();
      const reason = new Error("stop");
      setTimeout(() => controller.abort(reason), 10);
      const startedAt = performance.now();
      await expect(
        tool?.execute({ query: "q", title: "t" }, { signal: controller.signal }),
      ).rejects.toBe(reason);
      expect(performance.now() - startedAt).toBeLessThan(1_000);
    }
  });

  it("times out through the registry when slower than the call's timeout", async () => {
    const result = await registry(10_000).run("mock_ticket", { title: "t" }, { timeout_ms: 30 });
    expect(result).toMatchObject({ ok: false, kind: "timeout", error: "timed out after 30 ms" });
  });
});
