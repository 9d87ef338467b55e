import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ToolInvocationMode } from "../../src/domain/session-config.js";
import { distDir } from "../paths.js";

const WORKER = fileURLToPath(new URL("../workers/crash-turn.mjs", import.meta.url));

export interface CrashWorker {
  child: ChildProcess;
  pid: number;
  /** Settles once the child says its turn is mid-way (its tool is running). */
  midTurn: Promise<void>;
  /** Kills the child with SIGKILL and waits until it has exited (and been reaped). */
  killHard(): Promise<NodeJS.Signals | null>;
}

/**
 * Starts test/workers/crash-turn.mjs on the built package: a real process that runs a turn on
 * `dbPath` and stops mid-turn, waiting to be killed.
 */
export function startCrashWorker(
  dbPath: string,
  sessionId: string,
  mode: ToolInvocationMode,
  timeoutMs = 15_000,
): CrashWorker {
  const child = spawn(process.execPath, [WORKER, distDir, dbPath, sessionId, mode], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (text: string) => {
    stdout += text;
  });
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => {
    child.once("exit", (_code, signal) => resolve(signal));
  });
  const midTurn = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`crash worker never reached mid-turn\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, timeoutMs);
    child.stdout?.on("data", () => {
      if (stdout.includes("mid-turn\n")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `crash worker exited early (${code ?? signal})\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    });
  });
  midTurn.catch(() => {}); // observed by the test; this keeps a late rejection from going unhandled
  return {
    child,
    pid: child.pid ?? -1,
    midTurn,
    async killHard() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
  };
}
