import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { distDir, repoRoot } from "../../test/paths.js";
import {
  collectTurn,
  openTemporaryStore,
  type TemporaryStore,
} from "../../test/runtime/turn-harness.js";
import { TurnInProgressError } from "../domain/errors.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";

/**
 * Worker threads share their process's pid: a turn run by another thread of this process is alive
 * while the process is, and must not be taken for a turn this thread left behind.
 */
describe("runTurn: a turn running in another thread of the same process", () => {
  let lab: TemporaryStore;
  let worker: Worker | null = null;
  beforeEach(() => {
    lab = openTemporaryStore();
  });
  afterEach(async () => {
    await worker?.terminate();
    worker = null;
    lab.dispose();
  });

  it("refuses the second turn, naming the other thread as the runner, and leaves its turn running", async () => {
    // test/workers/crash-turn.mjs, in a thread: its turn stops mid-way on a tool that never ends.
    const thread = new Worker(join(repoRoot, "test/workers/crash-turn.mjs"), {
      argv: [distDir, lab.path, "threads", "chat_agent_tools"],
      stdout: true,
    });
    worker = thread;
    await new Promise<void>((resolve, reject) => {
      let text = "";
      thread.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
        if (text.includes("mid-turn\n")) resolve();
      });
      thread.once("error", reject);
      thread.once("exit", (code) =>
        reject(new Error(`the thread exited (${code}) before mid-turn`)),
      );
    });

    const refused = await collectTurn({
      store: lab.store,
      session_id: "threads",
      message: "hello",
      models: { chat: new SimChatModel() },
    });
    expect(refused.error).toBeInstanceOf(TurnInProgressError);
    expect((refused.error as TurnInProgressError).runner).toMatch(
      new RegExp(`^${process.pid}@.+#thread-${thread.threadId}$`),
    );
    expect(refused.events).toEqual([]);
    expect(lab.store.listTurns("threads").map((turn) => [turn.turn_index, turn.status])).toEqual([
      [1, "running"],
    ]);
  });
});
