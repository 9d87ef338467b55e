import { ApiError, api } from "./api.js";
import type { SessionRecord } from "./api-types.js";

/** SESSION_EXPORT_FORMAT of src/domain/session-export.ts. */
const EXPORT_FORMAT = "agent-lab.session";
/** How many other ids an import tries when the document's id is taken. */
const MAX_ID_TRIES = 20;

/** A refusal that names the file it is about, as the CLI's `import` does. */
export class ImportFileError extends Error {}

export interface ImportedSession {
  session: SessionRecord;
  /** The document's own id when it was taken and the session was stored under another one. */
  renamed_from: string | null;
}

/**
 * Imports an exported session from a file the user picked. A document whose id the lab already
 * has is stored under a new one (`ID-copy`, `ID-copy-2`, …), as `agent-lab import --session-id`
 * and `POST /api/import?session_id=` allow; errors name the file.
 */
export async function importSessionFile(file: File): Promise<ImportedSession> {
  const text = await file.text();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ImportFileError(`${file.name}: not valid JSON (${(error as Error).message})`);
  }
  const document =
    typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  if (document.format !== EXPORT_FORMAT) {
    const found = document.format === undefined ? "missing" : JSON.stringify(document.format);
    throw new ImportFileError(
      `${file.name}: format: expected "${EXPORT_FORMAT}", found ${found}; not a session written by agent-lab export`,
    );
  }
  const session = document.session as { id?: unknown } | undefined;
  const original = typeof session?.id === "string" ? session.id : null;
  for (let attempt = 0; attempt <= MAX_ID_TRIES; attempt += 1) {
    const id = attempt === 0 || original === null ? undefined : copyId(original, attempt);
    try {
      const result = await api.importSession(text, id);
      if (!result.session) throw new ImportFileError(`${file.name}: the server stored no session`);
      return { session: result.session, renamed_from: id === undefined ? null : original };
    } catch (error) {
      if (error instanceof ApiError && error.code === "session_exists" && original !== null)
        continue;
      if (error instanceof ApiError) {
        // The server names the part of the document it refuses ("document: turns.0…").
        throw new ImportFileError(`${file.name}: ${error.message.replace(/^document: /, "")}`);
      }
      throw error;
    }
  }
  throw new ImportFileError(
    `${file.name}: the session id ${original} and ${MAX_ID_TRIES} copies of it are all taken; import it with agent-lab import --session-id`,
  );
}

function copyId(original: string, attempt: number): string {
  const base = original.slice(0, 180); // ids are at most 200 characters
  return attempt === 1 ? `${base}-copy` : `${base}-copy-${attempt}`;
}
