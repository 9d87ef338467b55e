import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import type { RunQueue } from "../store/run-queue.js";
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

/**
 * For tests: the queue with some of its methods answered otherwise (a renewal that fails, an
 * attach held up, a claim whose answer is lost); `inner` is the real one, for the overrides to
 * call. Every other method is the queue's own.
 */
export function queueWith(
  inner: RunQueue,
  overrides: (inner: RunQueue) => Partial<RunQueue>,
): RunQueue {
  const replaced: Partial<RunQueue> = overrides(inner);
  return new Proxy(inner, {
    get(target, name, receiver) {
      const own = replaced[name as keyof RunQueue];
      if (own !== undefined) return own;
      const value = Reflect.get(target, name, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
