/**
 * Every code a lab error may carry, wherever its class lives: the vocabulary of `{ error: { code } }`
 * in the API and of a turn's `error` event. A class whose code is not listed here does not compile,
 * and the HTTP face's status table (src/server/http-errors.ts) must give each listed code a status.
 */
export type ErrorCode =
  // Input and lookups.
  | "invalid_input"
  | "not_found"
  | "session_not_found"
  | "turn_not_found"
  | "call_not_captured"
  | "approval_not_found"
  | "model_not_found"
  // Conflicts with the state of things.
  | "session_exists"
  | "session_mode_mismatch"
  | "session_model_mismatch"
  | "session_changed"
  | "turn_exists"
  | "turn_in_progress"
  | "turn_not_retryable"
  | "approval_decided"
  | "experiment_running"
  | "no_waiting_turn"
  // The HTTP face's refusals.
  | "unauthorized"
  | "forbidden"
  | "payload_too_large"
  | "unsupported_media_type"
  | "token_required"
  | "listen_failed"
  // Storage.
  | "database_open_failed"
  | "schema_too_new"
  | "stored_data_invalid"
  | "storage_failed"
  // Models and tools.
  | "provider_api_error"
  | "provider_connection_error"
  | "provider_stream_error"
  | "output_limit"
  | "tool_source_failed"
  // A gateway turn that ended without an upstream failure to report.
  | "turn_cancelled"
  | "turn_failed";

/**
 * Every error the lab raises on purpose carries a literal `code`, so callers branch on the code
 * and only the server maps codes to HTTP statuses.
 */
export abstract class AgentLabError extends Error {
  abstract readonly code: ErrorCode;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * An error's code, for audit lines, `error` events and branching: a lab error's own, anything else
 * (a bug, a library's failure the lab did not name) `internal_error`. Node's and SQLite's own
 * codes (`ENOENT`, `SQLITE_BUSY`) are another vocabulary, read where those calls are made.
 */
export function codeOf(error: unknown): ErrorCode | "internal_error" {
  return error instanceof AgentLabError ? error.code : "internal_error";
}

export class InvalidInputError extends AgentLabError {
  readonly code = "invalid_input" as const;
}

/**
 * A model endpoint that needs a key, named by a config while the variable holding it is unset:
 * the config is refused as any other (invalid input), but where the config is the lab's own and
 * not the caller's (a gateway upstream, the model string a client asked for), it is the server's
 * environment that lacks something, not the request.
 */
export class MissingApiKeyError extends InvalidInputError {
  constructor(
    message: string,
    /** The environment variable that should hold the key. */
    readonly variable: string,
  ) {
    super(message);
  }
}

export class SessionNotFoundError extends AgentLabError {
  readonly code = "session_not_found" as const;
  constructor(readonly sessionId: string) {
    super(`session not found: ${sessionId}`);
  }
}

/**
 * A claim made on the session as its runner last left it (`ClaimTurnOptions.expected`) found the
 * session written since (its `updated_at`) or made anew (its `incarnation`): nothing was claimed.
 */
export class SessionChangedError extends AgentLabError {
  readonly code = "session_changed" as const;
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} changed since this runner last left it; nothing was claimed`);
  }
}

export class SessionExistsError extends AgentLabError {
  readonly code = "session_exists" as const;
  constructor(readonly sessionId: string) {
    super(`session already exists: ${sessionId}`);
  }
}

/** The seed's `ValueError`: a session's tool invocation mode is fixed when it is created. */
export class SessionModeMismatchError extends AgentLabError {
  readonly code = "session_mode_mismatch" as const;
  constructor(
    readonly persisted: string,
    readonly requested: string,
  ) {
    super(`session tool invocation mode mismatch: persisted=${persisted} requested=${requested}`);
  }
}

/** A gateway request naming a session (`X-Agent-Lab-Session`) with a model the session does not use. */
export class SessionModelMismatchError extends AgentLabError {
  readonly code = "session_model_mismatch" as const;
  constructor(
    readonly session_id: string,
    readonly persisted: string,
    readonly requested: string,
  ) {
    super(
      `session ${session_id} records its calls to ${persisted}; this request asks for ${requested}: name another session for another model`,
    );
  }
}

export class TurnNotFoundError extends AgentLabError {
  readonly code = "turn_not_found" as const;
  constructor(
    readonly sessionId: string,
    readonly turnIndex: number,
  ) {
    super(`turn ${turnIndex} of session ${sessionId} has not been started`);
  }
}

export class TurnExistsError extends AgentLabError {
  readonly code = "turn_exists" as const;
  constructor(
    readonly sessionId: string,
    readonly turnIndex: number,
  ) {
    super(`turn ${turnIndex} of session ${sessionId} was already started`);
  }
}

/** The file could not be opened as a lab database (not SQLite, unreadable, or too new). */
export class DatabaseOpenError extends AgentLabError {
  readonly code = "database_open_failed" as const;
}

export class SchemaTooNewError extends AgentLabError {
  readonly code = "schema_too_new" as const;
  constructor(
    readonly path: string,
    readonly fileVersion: number,
    readonly supportedVersion: number,
  ) {
    super(
      `${path} was written by a newer agent-lab (schema version ${fileVersion}; this one reads up to ${supportedVersion}); upgrade agent-lab to open it. The file was left untouched.`,
    );
  }
}

/** A value read back from the database does not have the shape we wrote. */
export class StoredDataError extends AgentLabError {
  readonly code = "stored_data_invalid" as const;
}

/** A second turn was started on a session while one is still running. */
export class TurnInProgressError extends AgentLabError {
  readonly code = "turn_in_progress" as const;
  constructor(
    readonly sessionId: string,
    readonly turnIndex: number | null,
    readonly runner: string | null,
    /** For a turn held by another store's lease (PostgreSQL): how long until it runs out. */
    readonly leaseLeftMs: number | null = null,
  ) {
    const which = [
      turnIndex !== null ? `turn ${turnIndex}` : null,
      runner ? `run by ${runner}` : null,
    ]
      .filter(Boolean)
      .join(", ");
    const lease =
      leaseLeftMs === null
        ? ""
        : `; if its runner has died, its lease frees the session in ${Math.max(1, Math.ceil(leaseLeftMs / 1000))} s`;
    super(
      `session ${sessionId} already has a turn running${which ? ` (${which})` : ""}; wait for it to end or cancel it${lease}`,
    );
  }
}

/**
 * The database refused a read or write (disk full, I/O error, a locked or read-only file): the
 * operation changed nothing, and the message names the database's own reason and code.
 */
export class StorageError extends AgentLabError {
  readonly code = "storage_failed" as const;
  /**
   * `what` says what happened: a refusal of the write by default; a connection that failed says
   * so itself (it fails reads as well as writes).
   */
  constructor(
    readonly reason: string,
    readonly storageCode: string | null,
    options?: ErrorOptions,
    what = "the database refused the write",
  ) {
    super(`${what}: ${reason}${storageCode ? ` (${storageCode})` : ""}`, options);
  }
}

/** A model call streamed more than the session's `limits.max_output_chars`; it was stopped. */
export class OutputLimitError extends AgentLabError {
  readonly code = "output_limit" as const;
  constructor(readonly max_chars: number) {
    super(
      `the model's output passed limits.max_output_chars (${max_chars} characters): the call was stopped and what arrived is stored, cut`,
    );
  }
}

/**
 * A tool source of the lab config file could not give its tools (an MCP server that did not
 * start or would not list them): the lab config or that server is at fault, not the request.
 */
export class ToolSourceError extends AgentLabError {
  readonly code = "tool_source_failed" as const;
  constructor(
    readonly source: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
