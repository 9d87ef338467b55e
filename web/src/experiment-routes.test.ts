import { describe, expect, it } from "vitest";
import { experimentHref, matchRoute } from "./routes.js";

function route(href: string) {
  const url = new URL(href, "http://local");
  return matchRoute(url.pathname, url.search);
}

describe("experiment routes", () => {
  it("maps the list and an experiment's page with its view", () => {
    expect(matchRoute("/experiments", "")).toEqual({ name: "experiments" });
    expect(matchRoute("/experiments/", "")).toEqual({ name: "experiments" });
    expect(matchRoute("/experiments/exp-1", "")).toEqual({
      name: "experiment",
      id: "exp-1",
      cell: null,
      compare: [],
      scenario: null,
    });
    expect(
      matchRoute("/experiments/exp-1", "?cell=a&compare=a&compare=b&compare=c&scenario=s1"),
    ).toEqual({
      name: "experiment",
      id: "exp-1",
      cell: "a",
      compare: ["b", "c"],
      scenario: "s1",
    });
    expect(matchRoute("/experiments/exp-1/more", "")).toEqual({
      name: "not_found",
      path: "/experiments/exp-1/more",
    });
    expect(matchRoute("/experiments/%E0%A4%A", "")).toEqual({
      name: "not_found",
      path: "/experiments/%E0%A4%A",
    });
  });

  it("round-trips ids and cells that need escaping", () => {
    const id = "suite run/1?x";
    const cell = "dual_agent · openai:gpt-4.1 · sim & co/x";
    expect(experimentHref(id)).toBe("/experiments/suite%20run%2F1%3Fx");
    expect(route(experimentHref(id))).toEqual({
      name: "experiment",
      id,
      cell: null,
      compare: [],
      scenario: null,
    });
    const scenario = "multi/turn & more";
    expect(route(experimentHref(id, { cell, compare: [cell, "b"], scenario }))).toEqual({
      name: "experiment",
      id,
      cell,
      compare: [cell, "b"],
      scenario,
    });
    expect(experimentHref("e", { cell: null, compare: [] })).toBe("/experiments/e");
  });
});
