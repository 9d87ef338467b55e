import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { SafeMarkdown } from "./components/markdown.js";

const render = (text: string) => renderToStaticMarkup(createElement(SafeMarkdown, { text }));

describe("SafeMarkdown", () => {
  it("renders ordinary markdown", () => {
    const html = render("**bold** and `code`\n\n- item");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<code>code</code>");
    expect(html).toContain("<li>item</li>");
  });

  it("shows raw HTML as text, never as elements", () => {
    const html = render('<script>alert(1)</script>\n\n<img src="x" onerror="alert(2)"> <b>hi</b>');
    expect(html).not.toMatch(/<script|<img|<b>/);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("keeps http, https and mailto links, opening them in a new tab without an opener", () => {
    const html = render("[site](https://example.com) [mail](mailto:a@example.com)");
    expect(html).toContain('href="https://example.com/"');
    expect(html).toContain('href="mailto:a@example.com"');
    expect(html).toContain('rel="noopener noreferrer nofollow"');
  });

  it("renders other links as plain text", () => {
    const html = render(
      "[a](javascript:alert(1)) [b](data:text/html,x) [c](/relative) <vbscript:x>",
    );
    expect(html).not.toContain("href");
    expect(html).toContain('<span class="md-unsafe-link">a</span>');
  });

  it("never loads an image: each becomes a text placeholder", () => {
    const html = render(
      "![a cat](https://tracker.example/pixel.png) ![](data:image/png;base64,AAAA)",
    );
    expect(html).not.toContain("<img");
    expect(html).not.toContain("tracker.example");
    expect(html).toContain("[image: a cat]");
    expect(html).toContain("[image]");
  });
});
