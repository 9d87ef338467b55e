/**
 * Model output as markdown, safely: react-markdown builds React elements (no innerHTML), raw HTML in
 * the text is shown as text (no rehype-raw), links keep only http/https/mailto targets (others
 * become plain text), and images are never loaded: each becomes a text placeholder, so a reply
 * cannot make the browser fetch a remote URL.
 */
import { memo } from "react";
import Markdown, { type Components } from "react-markdown";
import { safeUrl } from "../url-safety.js";

const components: Components = {
  a({ href, children, title }) {
    if (!href) return <span className="md-unsafe-link">{children}</span>;
    return (
      <a href={href} title={title} target="_blank" rel="noopener noreferrer nofollow">
        {children}
      </a>
    );
  },
  img({ alt }) {
    return <span className="md-image">[image{alt ? `: ${alt}` : ""}]</span>;
  },
};

function urlTransform(url: string, key: string): string | null {
  // Image sources are never used (see `img` above); drop them so nothing can load them.
  if (key === "src") return null;
  return safeUrl(url);
}

export const SafeMarkdown = memo(function SafeMarkdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <Markdown components={components} urlTransform={urlTransform} skipHtml={false}>
        {text}
      </Markdown>
    </div>
  );
});
