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

/**
 * The session's history as a strict endpoint will accept it. Groups are written atomically, but a
 * file may still hold an assistant tool call without its reply (written message by message by an
 * older lab, or by hand); each such call gets an "interrupted" reply, stored, before the history
 * is used.
 */
export async function loadHistory(store: SessionStore, sessionId: string): Promise<ChatMessage[]> {
  const records = await store.listMessages(sessionId);
  const answered = new Set(
    records.flatMap((record) => (record.tool_call_id ? [record.tool_call_id] : [])),
  );
  const orphans = new Map<number, ChatMessage[]>();
  for (const record of records) {
    for (const call of record.tool_calls) {
      if (answered.has(call.id)) continue;
      const group = orphans.get(record.turn_index) ?? [];
      group.push(interruptedReply(call));
      orphans.set(record.turn_index, group);
    }
  }
  if (orphans.size === 0) return records.map(toMessage);
  for (const [turn_index, messages] of orphans) {
    await store.appendMessages(sessionId, { turn_index, messages });
    await store.appendAudit(sessionId, {
      event: "history_repaired",
      details: { tool_call_ids: messages.map((message) => message.tool_call_id) },
      turn_index,
    });
  }
  return loadHistory(store, sessionId);
}
