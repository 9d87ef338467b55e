// One of several processes writing to the same session at once. Usage: node append-process.mjs
// MODULE_URL DB_PATH SESSION_ID LABEL COUNT. Prints one JSON line of what it believes it wrote.
const [moduleUrl, path, sessionId, label, countText] = process.argv.slice(2);
const { SqliteSessionStore } = await import(moduleUrl);
const count = Number(countText);
const store = new SqliteSessionStore(path);
let sharedRecorded = 0;
for (let index = 0; index < count; index++) {
  store.appendUsage(sessionId, {
    turn_index: 1,
    round_index: 1,
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    elapsed_ms: 1,
    metadata: { metric_key: `${label}:${index}` },
  });
  // Both processes record the same shared keys: exactly one of each must land.
  if (
    store.appendUsage(sessionId, {
      turn_index: 1,
      round_index: 2,
      usage: { total_tokens: 1 },
      elapsed_ms: 1,
      metadata: { metric_key: `shared:${index}` },
    })
  ) {
    sharedRecorded++;
  }
  if (index % 5 === 0) {
    const id = `${label}-call-${index}`;
    store.appendMessages(sessionId, {
      turn_index: 1,
      messages: [
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id, name: "mock_search", arguments: {}, raw_arguments: "{}" }],
        },
        { role: "tool", content: "{}", tool_call_id: id, name: "mock_search" },
      ],
    });
    store.appendAudit(sessionId, { event: "tool_end", details: { label, index } });
  }
}
store.close();
process.stdout.write(`${JSON.stringify({ label, sharedRecorded })}\n`);
