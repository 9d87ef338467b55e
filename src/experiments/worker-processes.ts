import { type ChildProcess, spawn } from "node:child_process";

/** One local worker process of `bench --workers`. */
export interface WorkerProcess {
  /** 1-based, as shown to the user. */
  index: number;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartWorkersOptions {
  count: number;
  /** The command line of a worker: the node binary runs `[...args]`. */
  args: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /**
   * Each line a worker writes to stderr, without the CLI's own `agent-lab: ` in front: the
   * coordinator says it again with the worker's number.
   */
  onLine(index: number, line: string): void;
}

/**
 * Set in a worker's environment by its coordinator: the worker's stdin is a pipe the coordinator
 * holds open and never writes, so its end says the coordinator is gone (see `listenForStop`).
 */
export const COORDINATOR_PIPE_ENV = "AGENT_LAB_COORDINATOR_PIPE";

/**
 * Starts the workers, each in a process group of its own: Ctrl-C at a terminal goes to the
 * foreground group, and a worker that heard it and then the coordinator's forwarded SIGTERM would
 * take the second signal as "stop now" and leave its runs to lapse instead of giving them back.
 * Being on their own, they would outlive a coordinator killed outright (SIGKILL, the OOM killer, a
 * hangup) unseen: each one's stdin is a pipe from the coordinator, which closes when it dies.
 */
export function startWorkerProcesses(options: StartWorkersOptions): {
  workers: WorkerProcess[];
  signal(signal: NodeJS.Signals): void;
} {
  const children: ChildProcess[] = [];
  const workers = Array.from({ length: options.count }, (_, offset): WorkerProcess => {
    const index = offset + 1;
    const child = spawn(process.execPath, [...options.args], {
      env: { ...options.env, [COORDINATOR_PIPE_ENV]: "1" },
      stdio: ["pipe", "ignore", "pipe"],
      detached: true,
    });
    children.push(child);
    // A worker that ended first closes its end: nothing is written, so that is no error.
    child.stdin?.on("error", () => {});
    let pending = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      pending += text;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) if (line.length > 0) options.onLine(index, ownLine(line));
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
      (resolve) => {
        child.once("error", () => resolve({ code: 1, signal: null }));
        child.once("close", (code, signal) => {
          if (pending.length > 0) options.onLine(index, ownLine(pending));
          resolve({ code, signal });
        });
      },
    );
    return { index, pid: child.pid ?? 0, exited };
  });
  return {
    workers,
    signal(signal) {
      for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      }
    },
  };
}

const ownLine = (line: string) => line.replace(/^agent-lab: /, "");
