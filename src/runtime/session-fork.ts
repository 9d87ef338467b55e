import { randomUUID } from "node:crypto";
import { InvalidInputError, SessionNotFoundError, TurnInProgressError } from "../domain/errors.js";
import type { SessionRecord, TurnRecord } from "../domain/records.js";
import { modeOf } from "../domain/session-config.js";
import type { SessionExport } from "../domain/session-export.js";
import type { SessionStore } from "../store/session-store.js";
import { type DerivedFrom, derivedConfig } from "./derived-config.js";
import { prepareTurn, type TurnProviders } from "./turn-providers.js";

/** What a fork and a replay are made from. */
export interface DeriveSessionOptions {
  store: SessionStore;
  /** The config is checked the way a new session's is: its models and tools must build. */
  providers: TurnProviders;
  source_id: string;
  /** Default: the source's title with "(fork at turn N)" / "(replay)". */
  title?: string | undefined;
  /** Merged over the source's config as a JSON Merge Patch (derived-config.ts). */
  config?: Record<string, unknown> | undefined;
  /** Put before a config field in refusals; default `config.`. */
  field_prefix?: string | undefined;
}

export interface ForkSessionOptions extends DeriveSessionOptions {
  /** The last turn to copy; 0 copies none (a new session with the source's config). */
  turn_index: number;
}

/** The source session, or SessionNotFoundError. */
export async function requireSource(
  store: SessionStore,
  sessionId: string,
): Promise<SessionRecord> {
  const source = await store.getSession(sessionId);
  if (source === null) throw new SessionNotFoundError(sessionId);
  return source;
}

/**
 * The turns a fork at `turnIndex` copies. Only finished turns are copied: a running turn's
 * messages may still end in an assistant tool call without its reply, which no endpoint accepts.
 */
function copiedTurns(sessionId: string, turns: TurnRecord[], turnIndex: number): TurnRecord[] {
  if (!Number.isInteger(turnIndex) || turnIndex < 0) {
    throw new InvalidInputError(`turn_index: must be a whole number >= 0, not ${turnIndex}`);
  }
  const copied = turns.filter((turn) => turn.turn_index <= turnIndex);
  const running = copied.find((turn) => turn.status === "running");
  if (running !== undefined) {
    throw new TurnInProgressError(sessionId, running.turn_index, running.runner);
  }
  const last = turns.at(-1)?.turn_index ?? 0;
  if (turnIndex > last) {
    throw new InvalidInputError(
      `turn_index: session ${sessionId} has ${last === 0 ? "no turns" : `turns 1 to ${last}`}, so turn_index ${turnIndex} is past its last turn`,
    );
  }
  return copied;
}

/**
 * Copies turns 1..turn_index of a session (their messages, audit rows, usage and captured
 * payloads) into a new session whose config is the source's with the overrides merged over it.
 * Written through the store's public export and import, so it works on any store backend; the
 * import is all or nothing. Returns the new session.
 */
export async function forkSession(options: ForkSessionOptions): Promise<SessionRecord> {
  const { store, source_id, turn_index } = options;
  const source = await requireSource(store, source_id);
  copiedTurns(source_id, await store.listTurns(source_id), turn_index);
  const title = options.title ?? `${source.title} (fork at turn ${turn_index})`;
  return await deriveSession(
    options,
    source,
    { kind: "fork", session_id: source_id, turn_index },
    title,
  );
}

/**
 * A new session derived from `source`: config merged and checked, turns up to
 * `derived_from.turn_index` copied from one consistent export of the source.
 */
export async function deriveSession(
  options: DeriveSessionOptions,
  source: SessionRecord,
  derived_from: DerivedFrom,
  title: string,
): Promise<SessionRecord> {
  const { store } = options;
  const prefix = options.field_prefix ?? "config.";
  const config = derivedConfig(source.config, options.config, derived_from, prefix);
  await prepareTurn(config, options.providers, { field_prefix: prefix });
  const exported = await store.exportSession(source.id);
  // Checked again on the snapshot: a turn may have started or ended since the first look.
  const turns = copiedTurns(source.id, exported.turns, derived_from.turn_index);
  const kept = (turnIndex: number | null) =>
    turnIndex !== null && turnIndex <= derived_from.turn_index;
  const calls = exported.usage.calls.filter((call) => kept(call.turn_index));
  const created_at = new Date().toISOString();
  const document: SessionExport = {
    ...exported,
    session: {
      ...exported.session,
      title,
      created_at,
      updated_at: created_at,
      tool_invocation_mode: modeOf(config),
      config,
    },
    turns,
    messages: exported.messages.filter((message) => kept(message.turn_index)),
    audit: exported.audit.filter((entry) => kept(entry.turn_index)),
    // The import recomputes the roll-ups from the calls and turns.
    usage: {
      calls,
      turns: exported.usage.turns.filter((rollup) => kept(rollup.turn_index)),
      session: exported.usage.session,
    },
  };
  const id = await store.importSession(document, { session_id: randomUUID() });
  // Payloads are not part of an export (session-export.ts); a fork keeps them, call by call.
  for (const call of calls) {
    if (call.metric_key === null) continue;
    const payload = await store.getCallPayload(source.id, call.metric_key);
    if (payload === null) continue;
    const { session_id: _source, stored_bytes: _bytes, created_at: _at, ...copy } = payload;
    await store.appendCallPayload(id, copy);
  }
  const created = await store.getSession(id);
  if (created === null) throw new SessionNotFoundError(id);
  return created;
}
