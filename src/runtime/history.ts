import type { ToolCallEvent } from "../domain/events.js";
import type { ChatMessage } from "../domain/messages.js";
import type { MessageRecord } from "../domain/records.js";
import type { SessionStore } from "../store/session-store.js";
import { interruptedReply } from "./event-kernel.js";

function toMessage(record: MessageRecord): ChatMessage {
  return {
    role: record.role,
    content: record.content,
    ...(record.name !== null ? { name: record.name } : {}),
    ...(record.tool_call_id !== null ? { tool_call_id: record.tool_call_id } : {}),
    tool_calls: record.tool_calls,
    // Older rows (and stores) have no such columns: undefined reads as none.
    ...(record.reasoning != null ? { reasoning: record.reasoning } : {}),
    ...(record.refusal != null ? { refusal: record.refusal } : {}),
  };
}

interface CallSlot {
  call: ToolCallEvent;
  turn_index: number;
  reply: ChatMessage | null;
  /** A reply to this call is stored, in place or late (e.g. an earlier repair). */
  stored: boolean;
}

/**
 * The session's history as a strict endpoint will accept it: every assistant tool call followed at
 * once by exactly one reply. Groups are written atomically, but a file may still hold an assistant
 * tool call without its reply (written message by message by an older lab, by hand, or imported);
 * each such call gets an "interrupted" reply, stored once, before the history is used.
 *
 * A reply answers a call only when it sits in the run of tool messages right after the call's
 * assistant message, which is where OpenAI- and Anthropic-compatible endpoints require it. A reply
 * stored later (after the next user or assistant message: a tool that finished after its turn
 * ended, or a repair appended at the end of the file) came after the conversation moved on: it
 * stays in the record but is not sent; the call is answered "interrupted" in place. Sending it
 * there instead would show the model a result it never had when it wrote what followed.
 */
export async function loadHistory(store: SessionStore, sessionId: string): Promise<ChatMessage[]> {
  const records = await store.listMessages(sessionId);
  const entries: { message: ChatMessage; slots: CallSlot[] }[] = [];
  /** Every call by id, to learn which ones have some reply stored, in place or not. */
  const byId = new Map<string, CallSlot[]>();
  /** The calls of the assistant message the current run of tool messages follows. */
  let open: CallSlot[] = [];
  for (const record of records) {
    if (record.role === "tool") {
      const id = record.tool_call_id ?? "";
      const slot = open.find((candidate) => candidate.call.id === id && candidate.reply === null);
      if (slot) {
        slot.reply = toMessage(record);
        slot.stored = true;
        continue;
      }
      // A late reply: it marks the most recent call with its id that has none stored yet.
      const late = (byId.get(id) ?? []).findLast((candidate) => !candidate.stored);
      if (late) late.stored = true;
      continue;
    }
    const message = toMessage(record);
    if (repeatsLastUserMessage(entries.at(-1)?.message, message)) continue;
    const slots = record.tool_calls.map((call) => ({
      call,
      turn_index: record.turn_index,
      reply: null,
      stored: false,
    }));
    for (const slot of slots) byId.set(slot.call.id, [...(byId.get(slot.call.id) ?? []), slot]);
    open = slots;
    entries.push({ message, slots });
  }

  const orphans = new Map<number, ChatMessage[]>();
  for (const slot of entries.flatMap((entry) => entry.slots)) {
    if (slot.reply !== null) continue;
    slot.reply = interruptedReply(slot.call);
    // A call with a late reply already has its record; a repair would only add a second one.
    if (slot.stored) continue;
    orphans.set(slot.turn_index, [...(orphans.get(slot.turn_index) ?? []), slot.reply]);
  }
  for (const [turn_index, messages] of orphans) {
    await store.appendMessages(sessionId, { turn_index, messages });
    await store.appendAudit(sessionId, {
      event: "history_repaired",
      details: { tool_call_ids: messages.map((message) => message.tool_call_id) },
      turn_index,
    });
  }
  return entries.flatMap(({ message, slots }) => [
    message,
    ...slots.map((slot) => slot.reply ?? interruptedReply(slot.call)),
  ]);
}

/**
 * A user message that says word for word what the one before it said, with no answer between:
 * the turn of the first got none (it failed, or was cancelled before its first round was written)
 * and the user, the client or `retry` sent it again. Both stay in the record; the model is sent
 * it once, as the one request it was meant to be.
 */
function repeatsLastUserMessage(last: ChatMessage | undefined, message: ChatMessage): boolean {
  return last?.role === "user" && message.role === "user" && last.content === message.content;
}

/** Appends a turn's user message to the history its model is sent (see repeatsLastUserMessage). */
export function pushUserMessage(history: ChatMessage[], message: ChatMessage): void {
  if (!repeatsLastUserMessage(history.at(-1), message)) history.push(message);
}
