import { readFileSync } from "node:fs";
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Node as YamlNode,
} from "yaml";
import type { z } from "zod";
import { InvalidInputError } from "../domain/errors.js";

/**
 * YAML files read into a zod schema with errors that point into the file, one line per problem:
 * `suites/x.yaml:14:9: scenarios.2.turns.0.expect.tools.0.name: Invalid input: expected string`.
 * Suites and the lab config file (`agent-lab.yaml`) are read this way.
 */

export interface YamlProblem {
  path: PropertyKey[];
  message: string;
  /** Point at the key itself rather than its value (an unknown key). */
  at_key?: boolean;
}

export interface YamlFileOptions<Output> {
  /** The error for an empty file. */
  empty: string;
  /** What the schema cannot say, checked once it passed. */
  problems?: (raw: unknown, parsed: Output) => YamlProblem[];
}

/** Parses YAML text into `schema`. Every problem is reported, one per line, with its line:column. */
export function parseYamlFile<Schema extends z.ZodType>(
  text: string,
  fileName: string,
  schema: Schema,
  options: YamlFileOptions<z.output<Schema>>,
): z.output<Schema> {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const where = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${fileName}:${line}:${col}`;
  };
  if (document.errors.length > 0) {
    throw new InvalidInputError(
      document.errors
        .map((error) => `${where(error.pos[0])}: YAML syntax error: ${error.message}`)
        .join("\n"),
    );
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    throw new InvalidInputError(`${where(0)}: YAML error: ${(error as Error).message}`);
  }
  if (document.contents === null) throw new InvalidInputError(`${where(0)}: ${options.empty}`);
  const result = schema.safeParse(value);
  const problems = result.success
    ? (options.problems?.(value, result.data) ?? [])
    : zodProblems(result.error);
  if (problems.length > 0) {
    throw new InvalidInputError(
      problems
        .map((problem) => {
          const path = problem.path.map(String).join(".");
          const offset = offsetOf(document, problem.path, problem.at_key === true);
          return `${where(offset)}: ${path ? `${path}: ` : ""}${problem.message}`;
        })
        .join("\n"),
    );
  }
  return result.data as z.output<Schema>;
}

/** A file's text; a missing or unreadable file is named in the error (`what`: "suite file"). */
export function readTextFile(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new InvalidInputError(`${what} not found: ${path}`);
    if (code === "EISDIR") {
      throw new InvalidInputError(`${what} ${path} is a directory; name a .yaml file`);
    }
    throw new InvalidInputError(`cannot read ${what} ${path}: ${(error as Error).message}`);
  }
}

function zodProblems(error: z.ZodError): YamlProblem[] {
  return error.issues.flatMap((issue): YamlProblem[] => {
    // One line per unknown key, pointing at the key.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        path: [...issue.path, key],
        message: `unknown key ${JSON.stringify(key)}`,
        at_key: true,
      }));
    }
    // A record's key refused by its schema: zod says only "Invalid key in record"; the reason is
    // in the key's own issues, and the key (not its value) is what to fix.
    if (issue.code === "invalid_key") {
      return [
        {
          path: issue.path,
          message: `invalid name: ${issue.issues.map((inner) => inner.message).join("; ")}`,
          at_key: true,
        },
      ];
    }
    return [{ path: issue.path, message: issue.message }];
  });
}

/**
 * Where a path points in the document: the value's start, or its key's for `atKey`. A path that
 * leads nowhere (a missing key) points at the deepest node that exists, its parent.
 */
function offsetOf(document: Document, path: readonly PropertyKey[], atKey: boolean): number {
  let node: unknown = document.contents;
  let offset = rangeStart(node) ?? 0;
  for (const [index, segment] of path.entries()) {
    const last = index === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(segment),
      );
      if (pair === undefined) return offset;
      const keyStart = rangeStart(pair.key);
      if (last && atKey && keyStart !== null) return keyStart;
      node = pair.value;
      // `key:` with no value: point at the key.
      offset = rangeStart(node) ?? keyStart ?? offset;
    } else if (isSeq(node) && typeof segment === "number") {
      node = node.items[segment];
      const start = rangeStart(node);
      if (start === null) return offset;
      offset = start;
    } else {
      return offset;
    }
  }
  return offset;
}

function rangeStart(node: unknown): number | null {
  const range = (node as YamlNode | null | undefined)?.range;
  return range ? range[0] : null;
}
