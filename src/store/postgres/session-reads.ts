import type pg from "pg";
import type {
  AuditRecord,
  MessageRecord,
  SessionRecord,
  TurnRecord,
} from "../../domain/records.js";
import { modeOf } from "../../domain/session-config.js";
import type { UsageSummary } from "../../domain/usage.js";
import {
  type AuditRow,
  type MessageRow,
  type TurnRow,
  toAuditRecord,
  toMessageRecord,
  toTurnRecord,
  toUsageCallRecord,
  type UsageRow,
} from "../sqlite/rows.js";
import { sumRollups } from "../sqlite/usage-rollups.js";
import { run } from "./queries.js";
import { turnRollups } from "./usage-rollups.js";

/** A session's whole lists, on the pool or inside a caller's snapshot (an export). */

export async function readTurns(
  db: pg.Pool | pg.ClientBase,
  sessionId: string,
): Promise<TurnRecord[]> {
  return (await run<TurnRow>(db, "listTurns", [sessionId])).rows.map(toTurnRecord);
}

export async function readMessages(
  db: pg.Pool | pg.ClientBase,
  sessionId: string,
): Promise<MessageRecord[]> {
  return (await run<MessageRow>(db, "listMessages", [sessionId])).rows.map(toMessageRecord);
}

export async function readAudit(
  db: pg.Pool | pg.ClientBase,
  sessionId: string,
): Promise<AuditRecord[]> {
  return (await run<AuditRow>(db, "listAudit", [sessionId])).rows.map(toAuditRecord);
}

/** Every call and the roll-ups, from one snapshot (the caller's transaction). */
export async function readUsage(
  client: pg.ClientBase,
  sessionId: string,
  session: SessionRecord | null,
): Promise<UsageSummary> {
  // Calls of a session without a row (a copied legacy file) use the default mode.
  const mode = session?.tool_invocation_mode ?? modeOf({});
  const calls = (await run<UsageRow>(client, "listUsage", [sessionId])).rows.map((row) =>
    toUsageCallRecord(row, mode),
  );
  const turns = await turnRollups(client, sessionId);
  return { calls, turns, session: sumRollups(turns) };
}
