import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../../domain/errors.js";
import { Suite } from "../../domain/experiment.js";
import { parseInput } from "../../domain/validation.js";
import type {
  QueuedExperimentOptions,
  QueuedExperimentOutcome,
} from "../../experiments/queued-experiment.js";
import { COORDINATOR_PIPE_ENV } from "../../experiments/worker-processes.js";
import { labExists } from "../../store/open-store.js";
import type { RunQueue } from "../../store/run-queue.js";
import type { SessionStore } from "../../store/session-store.js";
import type { CommandContext } from "../command-context.js";
import { DATABASE_ENV, type DatabaseLocation, openStoreForWriting } from "../database-path.js";
import { type CliIo, terminalSafe } from "../output.js";
import {
  BUNDLED_SUITE,
  bundledSuitePath,
  RunFlags,
  SIGNAL_EXIT_CODES,
  type StopSignal,
} from "./bench.js";

/** A claim's lease when none is given: long enough for any run between two renewals. */
export const DEFAULT_LEASE_SECONDS = 30;

const WorkerFlags = RunFlags.extend({ quiet: z.boolean().optional() });

/** The CLI's own entry point, which `bench --workers` starts as its workers. */
export function cliEntryPath(): string {
  return fileURLToPath(new URL("../../../bin/agent-lab.js", import.meta.url));
}

/**
 * SIGINT and SIGTERM abort the returned signal; a second one exits at once (the claims then
 * lapse instead of being given back). `coordinator`: the stream whose end means the process that
 * started this one is gone (a worker's stdin under `bench --workers`), taken as its SIGTERM.
 * `dispose` stops listening.
 */
export function listenForStop(coordinator?: NodeJS.ReadStream): {
  signal: AbortSignal;
  stoppedBy(): StopSignal | null;
  dispose(): void;
} {
  const controller = new AbortController();
  let stoppedBy: StopSignal | null = null;
  const on = (signal: StopSignal) => {
    if (stoppedBy !== null) process.exit(SIGNAL_EXIT_CODES[signal]);
    stoppedBy = signal;
    controller.abort(new Error(`cancelled by ${signal}`));
  };
  const onSigint = () => on("SIGINT");
  const onSigterm = () => on("SIGTERM");
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  const onGone = () => {
    // Nobody reads this process's stderr any more: a line written there must not end it.
    process.stderr.on("error", () => {});
    if (stoppedBy === null) on("SIGTERM");
  };
  coordinator?.on("end", onGone);
  coordinator?.on("error", onGone);
  coordinator?.resume();
  return {
    signal: controller.signal,
    stoppedBy: () => stoppedBy,
    dispose() {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
      coordinator?.off("end", onGone);
      coordinator?.off("error", onGone);
      // An open stdin would keep this process waiting on it.
      coordinator?.destroy();
    },
  };
}

/** The store and its run queue, in the database `--db`/$AGENT_LAB_DB names (file or URL). */
export async function openQueuedLab(
  location: DatabaseLocation,
): Promise<{ store: SessionStore; queue: RunQueue; close(): Promise<void> }> {
  const { openRunQueue } = await import("../../store/run-queue-open.js");
  const store = await openStoreForWriting(location);
  let queue: RunQueue;
  try {
    queue = await openRunQueue(store);
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    store,
    queue,
    async close() {
      await queue.close();
      await store.close();
    },
  };
}

export function registerWorkerCommand(program: Command, context: CommandContext): void {
  program
    .command("worker")
    .description(
      "Join an experiment as one more worker: claim its runs from the lab's database (SQLite file or PostgreSQL), run them, until every run is done.",
    )
    .argument(
      "[suite]",
      `a suite file (YAML) or "${BUNDLED_SUITE}": plans its experiment (or joins it) and works on it`,
    )
    .option(
      "--experiment <id>",
      "the experiment to join: its suite and runs are read from the database (with a suite: the id to record under)",
    )
    .option("--concurrency <n>", "runs at once in this worker (default: the suite's concurrency)")
    .option("--repetitions <n>", "with a suite: runs per cell and scenario to plan")
    .option(
      "--lease <seconds>",
      `how long a claimed run stays this worker's without renewal (default ${DEFAULT_LEASE_SECONDS}); a killed worker's runs are claimed again after it`,
    )
    .option("--quiet", "no progress lines (what a worker run by bench --workers uses)")
    .addHelpText(
      "after",
      `
Any number of workers, on any host that reaches the database, share one experiment: each claims
the next run, renews its claim while the run runs, and records it done; a run is done exactly
once. A worker that dies leaves its runs to lapse: another claims them again once the lease ends.
Ctrl-C gives this worker's runs back and exits (130). The exit code is 0 once every run of the
experiment is done, 1 when some could not run.

Examples:
  $ AGENT_LAB_DB=postgres://lab@db.internal/lab agent-lab worker --experiment bundled-1a2b3c4d
  $ AGENT_LAB_DB=lab.sqlite3 agent-lab worker suites/my-suite.yaml --concurrency 8
  $ AGENT_LAB_DB=postgres://lab@db.internal/lab agent-lab bench bundled --workers 4`,
    )
    .action(async (suite: string | undefined, flags: Record<string, unknown>, command: Command) => {
      context.exitCode = await workerCommand(suite, flags, command, context);
    });
}

async function workerCommand(
  suiteArgument: string | undefined,
  rawFlags: Record<string, unknown>,
  command: Command,
  context: CommandContext,
): Promise<number> {
  const { io } = context;
  const flags = parseInput(WorkerFlags, rawFlags, "worker");
  if (suiteArgument === undefined && flags.experiment === undefined) {
    throw new InvalidInputError(
      "worker: name a suite file, or --experiment ID to join an experiment already in the database",
    );
  }
  if (suiteArgument === undefined && flags.repetitions !== undefined) {
    throw new InvalidInputError(
      "worker: --repetitions plans runs, so it needs a suite; --experiment alone runs the stored plan",
    );
  }
  const [
    { ProgressReporter },
    { OUTAGE_LIMIT_MS, runWorker },
    { publishExperiment },
    { progressOf, watchQueue },
    { checkCells },
    { expandCells, experimentIdOf, loadSuite },
  ] = await Promise.all([
    import("../../experiments/progress.js"),
    import("../../experiments/experiment-worker.js"),
    import("../../experiments/queue-plan.js"),
    import("../../experiments/queue-progress.js"),
    import("../../experiments/run-plan.js"),
    import("../../experiments/suite.js"),
  ]);
  const suiteFile =
    suiteArgument === undefined
      ? undefined
      : suiteArgument === BUNDLED_SUITE
        ? bundledSuitePath()
        : suiteArgument;
  const loaded = suiteFile === undefined ? undefined : loadSuite(suiteFile);
  const location = context.database(command);
  // Joining needs a lab that holds the experiment: a mistyped --db must not leave an empty one.
  if (loaded === undefined && !(await labExists(location.path))) {
    throw new InvalidInputError(
      `worker: there is no lab at ${location.label} to join experiment ${JSON.stringify(flags.experiment ?? "")} in: check --db (or $AGENT_LAB_DB), or start the experiment there with "agent-lab bench SUITE --workers N"`,
    );
  }
  const lab = await openQueuedLab(location);
  const providers = context.providers(command);
  const stop = listenForStop(
    context.io.env[COORDINATOR_PIPE_ENV] === "1" ? process.stdin : undefined,
  );
  try {
    let suite: Suite;
    let experimentId: string;
    let recordedFile = suiteFile;
    if (loaded !== undefined) {
      suite = loaded;
      experimentId = flags.experiment ?? experimentIdOf(suite);
    } else {
      experimentId = flags.experiment ?? "";
      const stored = await lab.queue.readExperiment(experimentId);
      if (stored === null) {
        throw new InvalidInputError(
          `worker: experiment ${JSON.stringify(experimentId)} is not in this database's run queue: start it with "agent-lab bench SUITE --workers N" or "agent-lab worker SUITE"`,
        );
      }
      suite = parseInput(Suite, stored.suite, `experiment ${experimentId}: stored suite`);
      recordedFile = stored.suite_file ?? undefined;
    }
    const plan = { suite, experimentId, suiteFile: recordedFile };
    const cells = expandCells(suite);
    await checkCells(plan, cells, providers);
    if (loaded !== undefined) {
      await publishExperiment({
        queue: lab.queue,
        store: lab.store,
        ...plan,
        repetitions: flags.repetitions ?? suite.repetitions,
        retryErrors: false,
      });
    }
    const start = await lab.queue.counts(experimentId);
    const progress = new ProgressReporter(io.stderr);
    let shown = start.done + start.errors;
    const watcher =
      flags.quiet === true
        ? null
        : watchQueue(lab.queue, experimentId, 1000, (counts) => {
            if (counts.done + counts.errors === shown) return;
            shown = counts.done + counts.errors;
            progress.update(progressOf(counts, start.done, cells));
          });
    let outage = false;
    const working = runWorker({
      queue: lab.queue,
      store: lab.store,
      providers,
      ...plan,
      concurrency: flags.concurrency ?? suite.concurrency,
      leaseMs: (flags.lease ?? DEFAULT_LEASE_SECONDS) * 1000,
      signal: stop.signal,
      onOutage: (error) => {
        if (outage) return;
        outage = true;
        io.stderr.write(
          `agent-lab: worker: the database does not answer (${terminalSafe(error instanceof Error ? error.message : String(error))}); trying again for up to ${OUTAGE_LIMIT_MS / 1000} s\n`,
        );
      },
    });
    let outcome: Awaited<typeof working>;
    try {
      outcome = await working;
    } finally {
      // Stopped whatever the worker's end: its timer would keep a worker that failed alive.
      await watcher?.stop().catch(() => {});
    }
    progress.finish();
    const end = await lab.queue.counts(experimentId);
    const given = outcome.released > 0 ? `, ${outcome.released} given back unfinished` : "";
    io.stderr.write(
      terminalSafe(
        `worker ${outcome.worker}: ${outcome.ran} run${outcome.ran === 1 ? "" : "s"} finished here (${outcome.failed} with a failed turn, ${outcome.errors.length} could not run${given}); experiment ${experimentId}: ${end.done} of ${end.total} runs done${end.errors > 0 ? `, ${end.errors} could not run` : ""}\n`,
      ),
    );
    for (const error of outcome.errors.slice(0, 3)) {
      io.stderr.write(
        `agent-lab: run ${terminalSafe(`${error.run_key} could not run: ${error.message}`)}\n`,
      );
    }
    const stoppedBy = stop.stoppedBy();
    if (stoppedBy !== null) return SIGNAL_EXIT_CODES[stoppedBy];
    return outcome.errors.length > 0 ? 1 : 0;
  } finally {
    stop.dispose();
    await providers.tools.close();
    await lab.close();
  }
}

export interface WorkersFlags {
  workers: number;
  repetitions: number;
  concurrency: number | undefined;
  lease: number | undefined;
  location: DatabaseLocation;
  command: Command;
  io: CliIo;
  onNote(line: string): void;
}

/**
 * `bench --workers N`: the experiment runs on N local `agent-lab worker` processes. The database
 * reaches them in $AGENT_LAB_DB, not in their arguments, where any user of the host could read a
 * URL's password in the process list.
 */
export async function benchOnWorkers(
  common: Omit<
    QueuedExperimentOptions,
    "repetitions" | "workers" | "workerArgs" | "workerEnv" | "onNote"
  >,
  flags: WorkersFlags,
): Promise<QueuedExperimentOutcome> {
  const { runQueuedExperiment } = await import("../../experiments/queued-experiment.js");
  const { labConfig } = flags.command.optsWithGlobals<{ labConfig?: string }>();
  const args = [
    cliEntryPath(),
    ...(labConfig !== undefined ? ["--lab-config", labConfig] : []),
    "worker",
    "--experiment",
    common.experimentId,
    "--quiet",
    ...(flags.concurrency !== undefined ? ["--concurrency", String(flags.concurrency)] : []),
    ...(flags.lease !== undefined ? ["--lease", String(flags.lease)] : []),
  ];
  const outcome = await runQueuedExperiment({
    ...common,
    repetitions: flags.repetitions,
    workers: flags.workers,
    workerArgs: args,
    workerEnv: { ...flags.io.env, [DATABASE_ENV]: flags.location.path },
    onNote: flags.onNote,
  });
  if (outcome.reclaimed > 0) {
    flags.onNote(
      `${outcome.reclaimed} ${outcome.reclaimed === 1 ? "run was" : "runs were"} claimed more than once (a worker stopped, its lease lapsed, or a run that could not run was tried again); each was finished once`,
    );
  }
  return outcome;
}
