import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

/** For tests: a fresh store file in a temporary folder for each test, removed after it. */
export function temporaryStorePerTest(): { readonly store: SqliteSessionStore } {
  let folder: ReturnType<typeof temporaryDirectory> | undefined;
  let current: SqliteSessionStore | undefined;
  beforeEach(() => {
    folder = temporaryDirectory();
    current = new SqliteSessionStore(join(folder.path, "lab.sqlite3"));
  });
  afterEach(() => {
    current?.close();
    folder?.remove();
  });
  return {
    get store() {
      if (current === undefined) throw new Error("temporaryStorePerTest: only inside a test");
      return current;
    },
  };
}
