import { InvalidInputError } from "../../domain/errors.js";
import { readTextFile } from "../../files/yaml-file.js";

/**
 * BFCL's data files are JSON Lines: one JSON object a line (BFCL's own `load_file` reads them
 * with `json.loads` per line). Blank lines are skipped; a line that is not JSON is an error
 * naming `file:line` (and the column when the parser says where).
 */

export interface JsonLine {
  /** 1-based. */
  line: number;
  value: unknown;
}

export function readJsonLines(path: string, what: string): JsonLine[] {
  return parseJsonLines(readTextFile(path, what), path);
}

export function parseJsonLines(text: string, fileName: string): JsonLine[] {
  const lines: JsonLine[] = [];
  let start = 0;
  let number = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    number++;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === "") continue;
    try {
      lines.push({ line: number, value: JSON.parse(line) });
    } catch (error) {
      const message = (error as Error).message;
      // V8 says where for most errors; a line cut short ends where the line does.
      const position = /at position (\d+)/.exec(message)?.[1];
      const column = message.includes("end of JSON input")
        ? line.length + 1
        : position === undefined
          ? undefined
          : Number(position) + 1;
      const where = column === undefined ? "" : `:${column}`;
      throw new InvalidInputError(
        `${fileName}:${number}${where}: not a JSON object on this line (BFCL files hold one case a line): ${message}`,
      );
    }
  }
  return lines;
}
