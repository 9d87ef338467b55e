import type { z } from "zod";
import { InvalidInputError, StoredDataError } from "./errors.js";

/** "usage.prompt_tokens: Too small: expected number to be >=0" — the field path comes first. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

/** Parses input at a boundary; a failure names the operation and every offending field. */
export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  where: string,
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidInputError(`${where}: ${describeIssues(result.error)}`);
}

/** Parses JSON text that came from storage or the outside world, never trusting its shape. */
export function parseJsonText<Schema extends z.ZodType>(
  schema: Schema,
  text: string,
  where: string,
): z.output<Schema> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new StoredDataError(`${where}: not valid JSON (${(error as Error).message})`);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new StoredDataError(`${where}: ${describeIssues(result.error)}`);
}
