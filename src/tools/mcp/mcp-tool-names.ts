import { createHash } from "node:crypto";
import { InvalidInputError } from "../../domain/errors.js";

/**
 * MCP tool names may hold characters endpoints refuse (`.`, `/`, spaces) and, once prefixed with
 * `SERVER__`, run past 64 characters. Rather than drop such a tool, it is offered under a cleaned
 * name; a short hash of the original keeps two cleaned names apart. Each rename is reported.
 */

const VALID_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_NAME = 64;
/** `_` and 8 hex digits. */
const HASH_SUFFIX = 9;
/** Room a server name must leave for at least a few characters of each tool's own name. */
const MIN_TOOL_PART = 4;

export interface ExposedName {
  /** The name the model sees: `SERVER__TOOL` (the server is still called by its own name). */
  exposed: string;
  /** Why the name was changed, or null. */
  note: string | null;
}

export function checkServerPrefix(server: string): void {
  const prefix = `${server}__`;
  if (prefix.length + HASH_SUFFIX + MIN_TOOL_PART > MAX_NAME) {
    throw new InvalidInputError(
      `MCP server ${server}: the name is too long to prefix tool names (${MAX_NAME} characters at most in all); use a shorter server name`,
    );
  }
}

/** The names under which the server's tools are offered, in the server's order. */
export function exposeToolNames(server: string, originals: readonly string[]): ExposedName[] {
  const prefix = `${server}__`;
  const taken = new Set<string>();
  return originals.map((original) => {
    const plain = `${prefix}${original}`;
    if (VALID_NAME.test(plain) && !taken.has(plain)) {
      taken.add(plain);
      return { exposed: plain, note: null };
    }
    const cleaned = original.replace(/[^A-Za-z0-9_-]/g, "_") || "tool";
    let exposed = `${prefix}${cleaned}`;
    if (exposed.length > MAX_NAME || taken.has(exposed)) {
      const hash = createHash("sha256").update(original).digest("hex").slice(0, 8);
      exposed = `${prefix}${cleaned.slice(0, MAX_NAME - prefix.length - HASH_SUFFIX)}_${hash}`;
    }
    taken.add(exposed);
    const why =
      plain.length > MAX_NAME
        ? `is over ${MAX_NAME} characters with its prefix`
        : /[^A-Za-z0-9_-]/.test(original)
          ? "holds characters outside A-Z, a-z, 0-9, _ and -"
          : "collides with another tool's name";
    return { exposed, note: `tool ${JSON.stringify(original)} ${why}; offered as ${exposed}` };
  });
}
