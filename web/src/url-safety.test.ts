import { describe, expect, it } from "vitest";
import { safeUrl } from "./url-safety.js";

describe("safeUrl", () => {
  it("keeps absolute http, https and mailto links", () => {
    expect(safeUrl("https://example.com/a?b=1")).toBe("https://example.com/a?b=1");
    expect(safeUrl("HTTP://Example.com")).toBe("http://example.com/");
    expect(safeUrl("mailto:someone@example.com")).toBe("mailto:someone@example.com");
  });

  it("drops script, data and other schemes, however they are disguised", () => {
    for (const url of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      " javascript:alert(1)",
      "java\nscript:alert(1)",
      "java\tscript:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "vbscript:msgbox(1)",
      "file:///etc/passwd",
    ]) {
      expect(safeUrl(url), url).toBeNull();
    }
  });

  it("drops relative and protocol-relative links (they have no base to be judged by)", () => {
    expect(safeUrl("/api/sessions")).toBeNull();
    expect(safeUrl("//evil.example")).toBeNull();
    expect(safeUrl("#top")).toBeNull();
    expect(safeUrl("")).toBeNull();
  });
});
