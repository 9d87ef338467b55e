import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { runTurn } from "../composition/run-turn.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

let directory: ReturnType<typeof temporaryDirectory>;
let store: SqliteSessionStore;

beforeEach(() => {
  directory = temporaryDirectory();
  store = new SqliteSessionStore(join(directory.path, "lab.sqlite3"));
});
afterEach(() => {
  store.close();
  directory.remove();
});

describe("a new session's title, from the start of its first message", () => {
  it("is cut before a character of two UTF-16 units that straddles the cut, never through it", async () => {
    // 56 characters, then 🙂 (units 56 and 57): a cut at 57 would keep half of it.
    const message = `${"Rate the sentiment of these reviews for me, if you can".padEnd(56, ".")}🙂 and then summarise them all`;
    expect(message.codePointAt(56)).toBe(0x1f642);
    for await (const _ of runTurn({ store, session_id: "s", message })) {
      // run the turn
    }
    expect(store.getSession("s")?.title).toBe(`${message.slice(0, 56)}...`);
    expect(store.listTurns("s").map((turn) => turn.status)).toEqual(["completed"]);
  });
});
