/**
 * Which numbers a model wrote as floats (`10.0`, `1e3`) in its raw argument text. Parsed JSON
 * cannot tell `10` from `10.0`, and the difference is a verdict: BFCL rejects a float for an
 * integer parameter (and accepts an integer for a float one). Paths are JSON arrays of keys and
 * indexes, `["limit"]`, `["sizes",1]`; the result is null when the text is not one JSON value
 * (an argument fallback repaired it: what ran is then judged by its parsed value).
 */
export function floatLiteralPaths(text: string): Set<string> | null {
  const scanner = new Scanner(text);
  try {
    scanner.value([]);
    scanner.space();
    return scanner.at === text.length ? scanner.floats : null;
  } catch {
    return null;
  }
}

export const pathKey = (path: readonly (string | number)[]): string => JSON.stringify(path);

const LITERAL = /true|false|null/y;
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings exclude raw control characters
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

class Scanner {
  at = 0;
  readonly floats = new Set<string>();

  constructor(readonly text: string) {}

  space(): void {
    while (this.at < this.text.length && " \t\n\r".includes(this.text[this.at] as string))
      this.at++;
  }

  value(path: (string | number)[]): void {
    this.space();
    const char = this.text[this.at];
    if (char === "{") this.object(path);
    else if (char === "[") this.array(path);
    else if (char === '"') this.string();
    else if (this.match(LITERAL) === null) this.number(path);
  }

  number(path: (string | number)[]): void {
    const char = this.text[this.at];
    const number = this.match(NUMBER);
    if (!number) throw new SyntaxError(`unexpected ${char ?? "end"} at ${this.at}`);
    if (number[1] !== undefined || number[2] !== undefined) this.floats.add(pathKey(path));
  }

  object(path: (string | number)[]): void {
    this.at++;
    this.space();
    if (this.text[this.at] === "}") {
      this.at++;
      return;
    }
    for (;;) {
      this.space();
      const key = this.string();
      this.space();
      this.expect(":");
      this.value([...path, key]);
      this.space();
      if (this.text[this.at] === "}") {
        this.at++;
        return;
      }
      this.expect(",");
    }
  }

  array(path: (string | number)[]): void {
    this.at++;
    this.space();
    if (this.text[this.at] === "]") {
      this.at++;
      return;
    }
    for (let index = 0; ; index++) {
      this.value([...path, index]);
      this.space();
      if (this.text[this.at] === "]") {
        this.at++;
        return;
      }
      this.expect(",");
    }
  }

  /** A JSON string (escapes included), returned decoded. */
  string(): string {
    const match = this.match(STRING);
    if (!match) throw new SyntaxError(`expected a string at ${this.at}`);
    return JSON.parse(match[0]) as string;
  }

  /** A sticky match at the cursor, which it moves past: no slicing, so long texts stay linear. */
  match(pattern: RegExp): RegExpExecArray | null {
    pattern.lastIndex = this.at;
    const found = pattern.exec(this.text);
    if (found) this.at += found[0].length;
    return found;
  }

  expect(char: string): void {
    if (this.text[this.at] !== char) throw new SyntaxError(`expected ${char} at ${this.at}`);
    this.at++;
  }
}
