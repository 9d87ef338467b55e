import { describe, expect, it } from "vitest";
import {
  filtersFromSearch,
  hasFilters,
  localDayBound,
  searchFromFilters,
  showsExperimentRuns,
  withFilter,
} from "./session-list-query.js";
import { withQuery } from "./url-query.js";

describe("the sessions list's filters in the URL", () => {
  it("reads the filters from a query string and ignores other parameters", () => {
    expect(
      filtersFromSearch(
        "?q=weather&mode=dual_agent&status=failed&token=abc&tag=&updated_from=2026-01-02",
      ),
    ).toEqual({ q: "weather", mode: "dual_agent", status: "failed", updated_from: "2026-01-02" });
    expect(filtersFromSearch("")).toEqual({});
  });

  it("writes them back in a fixed order, so one filter set has one URL", () => {
    const search = searchFromFilters({ tag: "smoke", q: "a b", mode: "chat_agent_tools" });
    expect(search).toBe("?q=a+b&mode=chat_agent_tools&tag=smoke");
    expect(filtersFromSearch(search)).toEqual({ q: "a b", mode: "chat_agent_tools", tag: "smoke" });
    expect(searchFromFilters({})).toBe("");
  });

  it("keeps a value the server will refuse, so the server's error can name it", () => {
    expect(filtersFromSearch("?status=sideways")).toEqual({ status: "sideways" });
    expect(searchFromFilters({ status: "sideways" })).toBe("?status=sideways");
  });

  it("sets and clears one filter without touching the others", () => {
    const filters = withFilter({ q: "x" }, "model", "sim");
    expect(filters).toEqual({ q: "x", model: "sim" });
    expect(withFilter(filters, "q", "  ")).toEqual({ model: "sim" });
    expect(hasFilters({})).toBe(false);
    expect(hasFilters(filters)).toBe(true);
  });

  it("sends the filters and the page as query parameters, leaving out empty ones", () => {
    expect(
      withQuery("/api/sessions", { q: "é & ?", limit: 50, cursor: null, tag: undefined, mode: "" }),
    ).toBe("/api/sessions?q=%C3%A9+%26+%3F&limit=50");
    expect(withQuery("/api/sessions", {})).toBe("/api/sessions");
  });

  it("keeps the experiment runs toggle in the URL, last, and says when runs are shown", () => {
    const filters = filtersFromSearch("?include=experiments&q=x");
    expect(filters).toEqual({ include: "experiments", q: "x" });
    expect(searchFromFilters(filters)).toBe("?q=x&include=experiments");
    expect(showsExperimentRuns(filters)).toBe(true);
    expect(showsExperimentRuns(withFilter(filters, "include", ""))).toBe(false);
    // An experiment filter lists that experiment's runs whatever the toggle says.
    expect(showsExperimentRuns({ experiment: "bundled-1" })).toBe(true);
    expect(showsExperimentRuns({})).toBe(false);
  });

  it("a picked day is that day where the browser is, with its offset (the table shows local times)", () => {
    const zone = process.env.TZ;
    try {
      process.env.TZ = "America/Los_Angeles";
      expect(localDayBound("2026-01-10", "from")).toBe("2026-01-10T00:00:00.000-08:00");
      expect(localDayBound("2026-01-10", "to")).toBe("2026-01-10T23:59:59.999-08:00");
      // Before 1883 the city kept its mean solar time, 7:52:58 behind UTC, which no ISO offset
      // writes: the bound is the same instant with the offset rounded to a minute, inside the day.
      const from = localDayBound("1800-03-01", "from");
      const to = localDayBound("1800-03-01", "to");
      expect([from, to]).toStrictEqual([
        "1800-03-01T00:00:58.000-07:52",
        "1800-03-01T23:59:57.999-07:53",
      ]);
      expect([new Date(from).toISOString(), new Date(to).toISOString()]).toStrictEqual([
        "1800-03-01T07:52:58.000Z",
        "1800-03-02T07:52:57.999Z",
      ]);
      // A summer day has its own offset.
      expect(localDayBound("2026-07-10", "to")).toBe("2026-07-10T23:59:59.999-07:00");
      // Santiago's clock jumps from midnight to 01:00 on 2025-09-07, and repeats 23:00 on
      // 2025-04-05: that day starts at 01:00, the other ends in its second 23:00 hour.
      process.env.TZ = "America/Santiago";
      expect(localDayBound("2025-09-07", "from")).toBe("2025-09-07T01:00:00.000-03:00");
      expect(localDayBound("2025-04-05", "to")).toBe("2025-04-05T23:59:59.999-04:00");
      process.env.TZ = "Asia/Kolkata";
      expect(localDayBound("2026-03-31", "from")).toBe("2026-03-31T00:00:00.000+05:30");
      process.env.TZ = "UTC";
      expect(localDayBound("2026-03-31", "to")).toBe("2026-03-31T23:59:59.999+00:00");
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
