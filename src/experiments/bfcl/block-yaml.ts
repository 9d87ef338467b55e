/**
 * JSON data as block-style YAML, written directly: the `yaml` package's `stringify` took two
 * thirds of a whole BFCL import. Strings that could read as anything but themselves (numbers,
 * booleans, null, anything with `:` `#` quotes or line breaks…) are written as JSON strings, which
 * are valid YAML double-quoted scalars; the rest stay plain, so the file reads like a hand-written
 * suite. Only JSON values: plain objects, arrays, strings, finite numbers, booleans, null.
 */
export function blockYaml(value: unknown): string {
  const lines: string[] = [];
  writeValue(lines, value, "", null);
  return `${lines.join("\n")}\n`;
}

/** Inside a block-context plain scalar only `: ` and ` #` are special; letters first, no `:` or `#` at all. */
const PLAIN = /^[A-Za-z][A-Za-z0-9_ ./()'?!;,`%&*+=<>-]*$/;
/** What YAML 1.1 readers take for booleans or null; quoted for them too. */
const RESERVED = /^(?:true|false|null|yes|no|on|off|y|n)$/i;

function scalar(value: unknown): string {
  if (typeof value === "string") {
    return PLAIN.test(value) && !value.endsWith(" ") && !RESERVED.test(value)
      ? value
      : JSON.stringify(value);
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`blockYaml: ${value} is not a JSON number`);
    return String(value);
  }
  if (typeof value === "boolean" || value === null) return String(value);
  throw new Error(`blockYaml: ${typeof value} is not a JSON value`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isEmptyCollection(value: unknown): boolean {
  return (
    (Array.isArray(value) && value.length === 0) ||
    (isObject(value) && Object.keys(value).length === 0)
  );
}

/**
 * Writes `value` at `indent`. `lead` is the text that starts its first line (`- ` of a sequence
 * item, already indented); null when the value begins on a fresh line.
 */
function writeValue(lines: string[], value: unknown, indent: string, lead: string | null): void {
  if (Array.isArray(value) && value.length > 0) {
    value.forEach((item, index) => {
      const prefix = index === 0 && lead !== null ? lead : indent;
      if (!isEmptyCollection(item) && (Array.isArray(item) || isObject(item))) {
        writeValue(lines, item, `${indent}  `, `${prefix}- `);
      } else {
        lines.push(`${prefix}- ${inline(item)}`);
      }
    });
    return;
  }
  if (isObject(value) && Object.values(value).some((item) => item !== undefined)) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    entries.forEach(([key, item], index) => {
      const prefix = index === 0 && lead !== null ? lead : indent;
      const head = `${prefix}${scalar(key)}:`;
      if (!isEmptyCollection(item) && (Array.isArray(item) || isObject(item))) {
        lines.push(head);
        // A sequence under a key may sit at the key's own indentation; nested one step is clearer.
        writeValue(lines, item, `${indent}  `, null);
      } else {
        lines.push(`${head} ${inline(item)}`);
      }
    });
    return;
  }
  lines.push(`${lead ?? indent}${inline(value)}`);
}

function inline(value: unknown): string {
  if (Array.isArray(value)) return "[]";
  if (isObject(value)) return "{}";
  return scalar(value);
}
