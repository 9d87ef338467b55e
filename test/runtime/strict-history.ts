/**
 * The rule a strict Chat Completions endpoint enforces on a conversation, as a test assertion:
 * every tool call id of an assistant message gets exactly one `tool` reply, and those replies come
 * right after it (before the next user, assistant or system message); no `tool` reply answers a
 * call that is not open. Accepts stored records (`tool_call_id: null`), port messages and wire
 * messages (`tool_calls: [{ id, function }]`) alike.
 */
export interface HistoryMessage {
  role: string;
  tool_call_id?: string | null | undefined;
  tool_calls?: readonly { id: string }[] | null | undefined;
}

export function strictHistoryProblems(messages: readonly HistoryMessage[]): string[] {
  const problems: string[] = [];
  /** The tool call ids of the open group, and whether each has been answered. */
  let open: Map<string, boolean> | null = null;
  let openedAt = -1;
  const closeGroup = () => {
    if (open === null) return;
    const unanswered = [...open].filter(([, answered]) => !answered).map(([id]) => id);
    if (unanswered.length > 0) {
      problems.push(
        `message ${openedAt}: tool call(s) ${unanswered.join(", ")} have no reply before the next message`,
      );
    }
    open = null;
  };
  messages.forEach((message, index) => {
    if (message.role === "tool") {
      const id = message.tool_call_id ?? null;
      if (id === null) {
        problems.push(`message ${index}: a tool reply without a tool_call_id`);
      } else if (open === null || !open.has(id)) {
        problems.push(`message ${index}: tool reply ${id} answers no open tool call`);
      } else if (open.get(id) === true) {
        problems.push(`message ${index}: tool call ${id} is answered twice`);
      } else {
        open.set(id, true);
      }
      return;
    }
    closeGroup();
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return;
    if (message.role !== "assistant") {
      problems.push(`message ${index}: a ${message.role} message carries tool_calls`);
      return;
    }
    const group = new Map<string, boolean>();
    for (const call of calls) {
      if (group.has(call.id)) problems.push(`message ${index}: tool call id ${call.id} repeated`);
      group.set(call.id, false);
    }
    open = group;
    openedAt = index;
  });
  closeGroup();
  return problems;
}

/** Throws, listing every problem, unless the history is one a strict endpoint accepts. */
export function assertStrictHistory(messages: readonly HistoryMessage[]): void {
  const problems = strictHistoryProblems(messages);
  if (problems.length > 0) {
    const roles = messages
      .map((message) => {
        const calls = message.tool_calls?.map((call) => call.id) ?? [];
        const detail = message.tool_call_id ?? (calls.length > 0 ? calls.join("+") : "");
        return detail ? `${message.role}(${detail})` : message.role;
      })
      .join(", ");
    throw new Error(`history is not strict-valid:\n- ${problems.join("\n- ")}\nhistory: ${roles}`);
  }
}
