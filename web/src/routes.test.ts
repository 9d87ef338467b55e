import { describe, expect, it } from "vitest";
import { compareHref, matchRoute, sessionHref } from "./routes.js";

describe("matchRoute", () => {
  it("maps the three pages", () => {
    expect(matchRoute("/", "")).toEqual({ name: "sessions" });
    expect(matchRoute("/sessions/abc-1", "")).toEqual({ name: "session", id: "abc-1" });
    expect(matchRoute("/sessions/abc/", "")).toEqual({ name: "session", id: "abc" });
    expect(matchRoute("/compare", "?a=x&b=y")).toEqual({ name: "compare", a: "x", b: "y" });
    expect(matchRoute("/compare", "")).toEqual({ name: "compare", a: null, b: null });
    expect(matchRoute("/nope", "")).toEqual({ name: "not_found", path: "/nope" });
  });

  it("round-trips ids that need escaping", () => {
    const id = "a b/c?d";
    const href = sessionHref(id);
    expect(matchRoute(href, "")).toEqual({ name: "session", id });
    const url = new URL(compareHref("x&y", "z"), "http://local");
    expect(matchRoute(url.pathname, url.search)).toEqual({ name: "compare", a: "x&y", b: "z" });
  });
});
