import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { distDir, repoRoot, temporaryDirectory } from "../../test/paths.js";
import { createRaceSession, expectTurnsInSequence } from "../../test/runtime/race-session.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";

const PROCESSES = 8;
// Enough that the old check-then-insert race shows (it did within 40 rounds of 8 on 2 cores).
const ROUNDS = 40;

interface ClaimResult {
  label: string;
  round: string;
  ran: boolean;
  turn_index?: number;
  status?: string;
  code?: string | null;
  message?: string;
}

/** A worker process (test/workers/claim-turn.mjs) and its stdout, line by line. */
class TurnProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #lines: Interface;
  readonly #queue: string[] = [];
  readonly #waiting: { resolve(line: string): void; reject(error: Error): void }[] = [];
  stderr = "";

  constructor(path: string, label: string) {
    this.child = spawn(process.execPath, [
      join(repoRoot, "test/workers/claim-turn.mjs"),
      distDir,
      path,
      "race",
      label,
    ]);
    this.child.stderr.on("data", (chunk) => {
      this.stderr += chunk;
    });
    this.#lines = createInterface({ input: this.child.stdout });
    this.#lines.on("line", (line) => {
      const waiter = this.#waiting.shift();
      if (waiter) waiter.resolve(line);
      else this.#queue.push(line);
    });
    this.child.once("exit", (code) => {
      for (const waiter of this.#waiting.splice(0)) {
        waiter.reject(new Error(`worker exited ${code} before answering: ${this.stderr}`));
      }
    });
  }

  nextLine(): Promise<string> {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.child.exitCode !== null) {
      return Promise.reject(new Error(`worker exited: ${this.stderr}`));
    }
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  stop(): Promise<void> {
    this.child.stdin.end();
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) resolve();
      else this.child.once("exit", () => resolve());
    });
  }
}

describe("runTurn: one turn at a time per session, across processes", () => {
  let directory: ReturnType<typeof temporaryDirectory>;
  let workers: TurnProcess[] = [];
  beforeEach(() => {
    directory = temporaryDirectory();
  });
  afterEach(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    workers = [];
    directory.remove();
  });

  it(`${PROCESSES} processes released together, ${ROUNDS} rounds: turns never overlap, messages alternate, the refused get a clear error`, async () => {
    const path = join(directory.path, "race.sqlite3");
    createRaceSession(path);
    workers = Array.from({ length: PROCESSES }, (_, index) => new TurnProcess(path, `p${index}`));
    for (const worker of workers) expect(await worker.nextLine()).toBe("ready");

    const results: ClaimResult[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Every process is already waiting on its stdin: one write each releases them together.
      for (const worker of workers) worker.child.stdin.write(`${round}\n`);
      const answers = await Promise.all(workers.map((worker) => worker.nextLine()));
      results.push(...answers.map((line) => JSON.parse(line) as ClaimResult));
    }

    const ran = results.filter((result) => result.ran);
    const refused = results.filter((result) => !result.ran);
    const store = new SqliteSessionStore(path);
    try {
      const turns = store.listTurns("race");
      const messages = store.listMessages("race");
      expect(turns.map((turn) => turn.turn_index)).toEqual(turns.map((_, index) => index + 1));
      expect(turns.length).toBe(ran.length);
      expect(turns.every((turn) => turn.status === "completed")).toBe(true);
      expectTurnsInSequence(turns);
      // Stored in strict turn order: user, assistant, user, assistant…, each in its own turn.
      expect(messages.map((message) => message.role)).toEqual(
        turns.flatMap(() => ["user", "assistant"]),
      );
      expect(messages.map((message) => message.turn_index)).toEqual(
        turns.flatMap((turn) => [turn.turn_index, turn.turn_index]),
      );
      expect(messages.filter((message) => message.role === "user").map((m) => m.content)).toEqual(
        turns.map((turn) => turn.user_message),
      );
    } finally {
      store.close();
    }
    // At least one turn per round; every other start was refused, clearly, and nothing else failed.
    expect(ran.length).toBeGreaterThanOrEqual(ROUNDS);
    expect(ran.map((result) => result.status)).toEqual(ran.map(() => "completed"));
    for (const refusal of refused) {
      expect(refusal.code).toBe("turn_in_progress");
      expect(refusal.message).toMatch(
        /^session race already has a turn running \(turn \d+, run by \d+@/,
      );
    }
  }, 120_000);
});
