/** Which link targets the chat's markdown may keep: absolute http, https and mailto URLs only. */
const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

/**
 * The URL to use, or null to drop it (the link then renders as plain text). Parsing with the URL
 * parser (not a regex) sees through tricks like "java\nscript:" or entity-free case changes; a
 * relative or protocol-relative URL has no base and is dropped too.
 */
export function safeUrl(url: string): string | null {
  const trimmed = url.trim();
  if (trimmed === "") return null;
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return null;
  }
  return SAFE_PROTOCOLS.has(parsed.protocol) ? parsed.href : null;
}
