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
  };
}

interface CallSlot {
  call: ToolCallEvent;
  turn_index: number;
  reply: ChatMessage | null;
}

/**
 * The session's history as a strict endpoint will accept it: every assistant tool call followed at
 * once by exactly one reply. Groups are written atomically, but a file may still hold an assistant
 * tool call without its reply (written message by message by an older lab, or by hand); each such
 * call gets an "interrupted" reply, stored, before the history is used.
 *
 * Each reply is placed right after the call it answers, whatever its position in the file: a
 * repaired reply is appended at the end, and a strict endpoint refuses a reply after a later
 * message. A reply goes to the most recent unanswered call with its id (ids may repeat across
 * rounds); a reply that answers no call stays stored but is left out of the history.
 */
export async function loadHistory(store: SessionStore, sessionId: string): Promise<ChatMessage[]> {
  const records = await store.listMessages(sessionId);
  const entries: { message: ChatMessage; slots: CallSlot[] }[] = [];
  const open = new Map<string, CallSlot[]>();
  for (const record of records) {
    if (record.role === "tool") {
      const slot = open.get(record.tool_call_id ?? "")?.pop();
      if (slot) slot.reply = toMessage(record);
      continue;
    }
    const slots = record.tool_calls.map((call) => ({
      call,
      turn_index: record.turn_index,
      reply: null,
    }));
    for (const slot of slots) open.set(slot.call.id, [...(open.get(slot.call.id) ?? []), slot]);
    entries.push({ message: toMessage(record), slots });
  }

  const orphans = new Map<number, ChatMessage[]>();
  for (const slot of entries.flatMap((entry) => entry.slots)) {
    if (slot.reply !== null) continue;
    slot.reply = interruptedReply(slot.call);
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
