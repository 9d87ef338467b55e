/**
 * The one request the simulated model reads for any tool: "call NAME with {json}" (also "use",
 * "invoke", "run"; "with"/"using" optional; arguments optional). It lets a user, a suite or a test
 * drive a declared, HTTP or MCP tool through the sim with exact arguments. The whole message must be
 * that request, so ordinary prose ("use the search to find cats") still reads as before.
 */

export type NamedCall =
  | {
      kind: "call";
      name: string;
      arguments: Record<string, unknown> | null;
      /** The arguments exactly as written (`10.0` stays `10.0`); null without arguments. */
      written?: string | null;
    }
  | { kind: "bad_arguments"; name: string; problem: string };

const NAMED_CALL =
  /^\s*(?:(?:please|pls|now|then|ok|okay)[\s,]+)?(?:call|use|invoke|run)\s+(?:the\s+)?(?:tool\s+)?[`"']?(?<name>[A-Za-z0-9_][A-Za-z0-9_.:-]*)[`"']?(?:\s+tool)?(?:\s*(?:,\s*)?(?:with|using)(?:\s+(?:the\s+)?arguments)?)?\s*:?\s*(?<json>\{[\s\S]*\})?\s*[.!]?\s*$/i;

/** The named call in `text`, or null when the text is not one. */
export function readNamedCall(text: string): NamedCall | null {
  const match = NAMED_CALL.exec(text);
  const name = match?.groups?.name;
  if (match === null || name === undefined) return null;
  const json = match.groups?.json;
  if (json === undefined) return { kind: "call", name, arguments: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return { kind: "bad_arguments", name, problem: (error as Error).message };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { kind: "bad_arguments", name, problem: "the arguments must be a JSON object" };
  }
  return { kind: "call", name, arguments: parsed as Record<string, unknown>, written: json };
}

/**
 * The named calls in `text`: the whole text as one, or, when every non-empty line is one, one per
 * line (parallel calls, as BFCL's parallel cases need). Null when the text is not that.
 */
export function readNamedCalls(text: string): NamedCall[] | null {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  if (lines.length >= 2) {
    // Each line first: the whole text would read as one call whose JSON runs across the lines.
    const calls = lines.map(readNamedCall);
    if (calls.every((call) => call?.kind === "call")) return calls as NamedCall[];
  }
  const whole = readNamedCall(text);
  return whole === null ? null : [whole];
}

/** The offered tool a named call means: exact name first, else the one equal ignoring case. */
export function offeredName(name: string, offered: readonly string[]): string | null {
  if (offered.includes(name)) return name;
  const lower = name.toLowerCase();
  return offered.find((candidate) => candidate.toLowerCase() === lower) ?? null;
}
