import { describe, expect, it } from "vitest";
import { formatDuration } from "../../src/domain/number-format.js";
import { agentModels, formatDateTime, formatDateTimeParts, formatTickMs } from "./format.js";

describe("formatTickMs", () => {
  it("labels chart axes in the lab's one duration format, the origin a bare 0", () => {
    expect([0, 250, 1000, 1500, 90_000].map(formatTickMs)).toStrictEqual([
      "0",
      "250 ms",
      "1.00 s",
      "1.50 s",
      "1 min 30 s",
    ]);
    for (const tick of [5, 250, 1500]) expect(formatTickMs(tick)).toBe(formatDuration(tick));
  });
});

describe("formatDateTimeParts", () => {
  it("gives the day and the time that formatDateTime joins, each whole", () => {
    const iso = "2020-03-31T23:53:00.000Z";
    const [day, time] = formatDateTimeParts(iso);
    expect(day).toBe(
      new Date(iso).toLocaleDateString(undefined, {
        year: "numeric",
        month: "short",
        day: "numeric",
      }),
    );
    expect(time).toBe(
      new Date(iso).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" }),
    );
    // Another year than this one names its year, as formatDateTime does.
    expect(formatDateTime(iso)).toContain("2020");
  });

  it("gives what is not a date as one part", () => {
    expect(formatDateTimeParts("not a date")).toStrictEqual(["not a date"]);
    expect(formatDateTimeParts(null)).toStrictEqual(["—"]);
  });
});

describe("agentModels", () => {
  it("names the models as the server's session list does", () => {
    expect(agentModels({})).toStrictEqual({ chat: "sim", event: "sim" });
    expect(agentModels({ chat_agent: { model: "openai:gpt-4.1-mini" } })).toStrictEqual({
      chat: "openai:gpt-4.1-mini",
      event: "openai:gpt-4.1-mini",
    });
    // An empty model is sim; an event agent, even without a model, is its own.
    expect(agentModels({ chat_agent: { model: "" }, event_agent: {} })).toStrictEqual({
      chat: "sim",
      event: "sim",
    });
    expect(
      agentModels({ chat_agent: { model: "openai:a" }, event_agent: { model: "openai:b" } }),
    ).toStrictEqual({ chat: "openai:a", event: "openai:b" });
  });
});
