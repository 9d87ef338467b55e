import type { ChatMessage } from "../domain/messages.js";
import { emptyUsageRollup, type TurnUsageRollup } from "../domain/usage.js";
import {
  type RuntimeAudit,
  type RuntimeRecords,
  type RuntimeUsage,
  runtimeRecords,
  type SessionStore,
} from "../store/session-store.js";

type AppendCallPayloadOptions = RuntimeRecords["payloads"][number];
type FinishedTurnStatus = NonNullable<Parameters<SessionStore["completeTurn"]>[1]["status"]>;

/**
 * Audit events someone must be able to read while the turn waits on them: written at once. (The
 * turn_start row is written with the claim, turn-lock.ts.)
 */
const LIVE_EVENTS = new Set(["approval_required"]);

interface Pending {
  message_groups: ChatMessage[][];
  usage: RuntimeUsage[];
  audit: RuntimeAudit[];
  payloads: AppendCallPayloadOptions[];
}

/** How a turn ended: its `turn_end` audit details, written with the turn's completion. */
export interface TurnEnd {
  status: FinishedTurnStatus;
  wall_time_ms: number;
  details: Record<string, unknown>;
}

/** What `audit` returns for a row it holds: settled, shared. */
const HELD: Promise<void> = Promise.resolve();

const nothing = (): Pending => ({ message_groups: [], usage: [], audit: [], payloads: [] });

/**
 * What a turn records, held until its round ends and then written with one `appendRecords`: a
 * round commits once instead of once per row, and is stored whole or not at all. A crash mid-round
 * loses that round's rows, never a half of them, so the history stays one an endpoint accepts.
 * Live SSE events do not wait for this: they are emitted, not read back.
 */
export class TurnRecords {
  readonly #store: SessionStore;
  readonly #sessionId: string;
  readonly #turnIndex: number;
  #pending = nothing();
  #rollup: TurnUsageRollup;
  #updatedAt: string | null = null;

  constructor(store: SessionStore, sessionId: string, turnIndex: number) {
    this.#store = store;
    this.#sessionId = sessionId;
    this.#turnIndex = turnIndex;
    this.#rollup = { turn_index: turnIndex, ...emptyUsageRollup() };
  }

  /**
   * An audit row of this turn; a live event is written at once, after what came before it. Not
   * an async function: a held row (nearly all of them) costs no promise of its own.
   */
  audit(event: string, details: Record<string, unknown>, round_index?: number): Promise<void> {
    const entry = this.#entry(event, details, round_index);
    if (!LIVE_EVENTS.has(event)) {
      this.#pending.audit.push(entry);
      return HELD;
    }
    return this.#writeLive(entry);
  }

  async #writeLive(entry: RuntimeAudit): Promise<void> {
    await this.flush();
    await this.#store.appendAudit(this.#sessionId, entry);
  }

  #entry(event: string, details: Record<string, unknown>, round_index?: number): RuntimeAudit {
    return { event, details, turn_index: this.#turnIndex, round_index: round_index ?? null };
  }

  /** A call's usage row, every field given (the store does not fill in defaults for it). */
  usage(entry: RuntimeUsage): void {
    this.#pending.usage.push(entry);
  }

  payload(entry: AppendCallPayloadOptions): void {
    this.#pending.payloads.push(entry);
  }

  /** A round's assistant message and tool replies: one group, stored all or nothing. */
  messages(group: ChatMessage[]): void {
    this.#pending.message_groups.push(group);
  }

  /**
   * Writes what is held in one transaction. With `rollup`, the turn's roll-up is read in the
   * same transaction, from the turn's own calls (see `rollup()`). A `round` (one that does not
   * end the turn) leaves the session's updated_at as the claim set it: the turn's end moves it.
   * Refused, the rows stay held, so the turn's failure path may try them once more (see
   * `flushLeftovers`).
   */
  async flush(options: { rollup?: boolean; end?: TurnEnd; round?: boolean } = {}): Promise<void> {
    const batch = this.#pending;
    const held =
      batch.message_groups.length + batch.usage.length + batch.audit.length + batch.payloads.length;
    if (held === 0 && !options.rollup && options.end === undefined) return;
    const { end } = options;
    this.#pending = nothing();
    try {
      const records: RuntimeRecords = {
        message_groups: batch.message_groups.map((messages) => ({
          turn_index: this.#turnIndex,
          messages,
        })),
        usage: batch.usage,
        // The end's own row is not held: refused, the turn ends as failed instead.
        audit: end ? [...batch.audit, this.#entry("turn_end", end.details)] : batch.audit,
        payloads: batch.payloads,
        touch_session: options.round !== true,
        ...(options.rollup ? { rollup_turn: this.#turnIndex } : {}),
        ...(end
          ? {
              complete_turn: {
                turn_index: this.#turnIndex,
                wall_time_ms: end.wall_time_ms,
                status: end.status,
              },
            }
          : {}),
      };
      const result = await this.#store.appendRecords(this.#sessionId, runtimeRecords(records));
      if (result.turn_rollup) this.#rollup = result.turn_rollup;
      if (result.updated_at !== null) this.#updatedAt = result.updated_at;
    } catch (error) {
      this.#pending = merge(batch, this.#pending);
      throw error;
    }
  }

  /**
   * For a turn that failed: what is still held, written once more if the database takes it now,
   * else dropped (the turn's end matters more). Never throws.
   */
  async flushLeftovers(): Promise<void> {
    try {
      await this.flush({ rollup: true });
    } catch {
      this.#pending = nothing();
      // The rounds written before still count: read them back alone (a write of nothing).
      await this.flush({ rollup: true }).catch(() => {});
    }
  }

  /** The session's `updated_at` as this turn's last write left it (null before any). */
  get updated_at(): string | null {
    return this.#updatedAt;
  }

  /** The turn's usage as last read back (zeros until a flush asked for it). */
  rollup(wall_time_ms: number | null): TurnUsageRollup {
    return { ...this.#rollup, turn_wall_time_ms: wall_time_ms };
  }
}

function merge(first: Pending, then: Pending): Pending {
  return {
    message_groups: [...first.message_groups, ...then.message_groups],
    usage: [...first.usage, ...then.usage],
    audit: [...first.audit, ...then.audit],
    payloads: [...first.payloads, ...then.payloads],
  };
}
