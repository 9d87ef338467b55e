import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import type { Command } from "commander";
import { z } from "zod";
import { InvalidInputError } from "../../domain/errors.js";
import { parseInput } from "../../domain/validation.js";
import type { ExperimentProgress } from "../../experiments/progress.js";
import type { ExperimentOutcome } from "../../experiments/run-experiment.js";
import type { RunQueue } from "../../store/run-queue.js";
import type { SessionStore } from "../../store/session-store.js";
import type { CommandContext } from "../command-context.js";
import { type DatabaseLocation, openStoreForWriting } from "../database-path.js";
import { type CliIo, terminalSafe } from "../output.js";

/** The suite shipped with the package, named on the command line by this word. */
export const BUNDLED_SUITE = "bundled";

/** Resolved from this file, not the working directory: dist/cli/commands → the package root. */
export function bundledSuitePath(): string {
  return fileURLToPath(new URL("../../../suites/bundled.yaml", import.meta.url));
}

/**
 * How far V8 may let the heap grow past the live data before a full collection, in percent. Its
 * default grows with the machine's memory: with a few GB it lets garbage reach 4x the live heap,
 * and an experiment makes garbage steadily (~50 MB per 1,000 sim runs survives the young
 * generation), so the peak followed the machine and the GC schedule, not the work. With a fixed
 * factor the heap stays within 1.5x the live data (plus V8's minimum step), on any machine.
 * `--max-old-space-size` cannot be changed once the process runs; this factor is read at each GC.
 */
const HEAP_GROWING_PERCENT = 50;

/** A claim's lease, in seconds (`bench --workers`, `worker`). */
const LeaseSeconds = z.coerce
  .number({ error: "must be a number of seconds" })
  .min(0.5, "must be 0.5 to 3600 seconds")
  .max(3600, "must be 0.5 to 3600 seconds");

/** A whole number from `low` to `high`, as a flag gives it (text). */
const wholeNumber = (low: number, high: number) =>
  z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(low, `must be ${low} to ${high}`)
    .max(high, `must be ${low} to ${high}`);

/** The flags `bench` and `worker` share. */
export const RunFlags = z.object({
  concurrency: wholeNumber(1, 64).optional(),
  repetitions: wholeNumber(1, 1000).optional(),
  experiment: z.string().trim().min(1, "name an experiment id").optional(),
  lease: LeaseSeconds.optional(),
});

const BenchFlags = RunFlags.extend({
  out: z.string().min(1, "name a folder").optional(),
  json: z.boolean().optional(),
  workers: wholeNumber(1, 64).optional(),
});

/** The shell's convention: 128 + the signal's number. */
export const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
export type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

export function registerBenchCommand(program: Command, context: CommandContext): void {
  program
    .command("bench")
    .description(
      "Run an experiment: every scenario of a suite across its matrix of modes and models, several times, each run a recorded session; then score the runs and report per cell.",
    )
    .argument(
      "[suite]",
      `a suite file (YAML), or "${BUNDLED_SUITE}" for the suite shipped with agent-lab`,
      BUNDLED_SUITE,
    )
    .option(
      "--out <dir>",
      "also write report.json and report.html (self-contained) into this folder",
    )
    .option("--concurrency <n>", "runs at once (default: the suite's concurrency)")
    .option("--repetitions <n>", "runs per cell and scenario (default: the suite's repetitions)")
    .option(
      "--experiment <id>",
      "the experiment id to record under and resume (default: derived from the suite's content)",
    )
    .option("--json", "print the report as JSON instead of a table")
    .option(
      "--workers <n>",
      "run on N local worker processes sharing the database (SQLite file or postgres:// URL); more can join with agent-lab worker",
    )
    .option(
      "--lease <seconds>",
      "with --workers: how long a claimed run stays its worker's without renewal (default 30)",
    )
    .addHelpText(
      "after",
      `
Running the same command again resumes: runs already finished are skipped, and runs cut short
(Ctrl-C, a crash) are run again in a new session. Ctrl-C stops cleanly: the runs in flight are
cancelled, the partial report is printed (and written with --out), exit code 130. Failing
scenarios are results, not errors: the exit code is 0 once every run has finished.

Examples:
  $ agent-lab bench bundled
  $ agent-lab bench bundled --repetitions 5 --out reports/
  $ agent-lab bench suites/my-suite.yaml --concurrency 8 --json > report.json
  $ agent-lab --db lab.sqlite3 bench bundled --experiment nightly-1
  $ agent-lab --db postgres://lab@db.internal/lab bench bundled --workers 4`,
    )
    .action(async (suite: string, flags: Record<string, unknown>, command: Command) => {
      context.exitCode = await benchCommand(suite, flags, command, context);
    });
}

async function benchCommand(
  suiteArgument: string,
  rawFlags: Record<string, unknown>,
  command: Command,
  context: CommandContext,
): Promise<number> {
  const { io } = context;
  // Flags and suite are checked before the database is opened: a refusal leaves no file behind.
  const flags = parseInput(BenchFlags, rawFlags, "bench");
  if (flags.lease !== undefined && flags.workers === undefined) {
    throw new InvalidInputError("bench: --lease is the workers' claim lease: it needs --workers N");
  }
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  // The experiment machinery loads with the command that uses it, not with every command.
  const [
    { ProgressReporter },
    { renderHtmlReport },
    { renderJsonReport },
    { renderTerminalReport },
    { experimentIdOf, loadSuite },
    workers,
  ] = await Promise.all([
    import("../../experiments/progress.js"),
    import("../../experiments/report-html.js"),
    import("../../experiments/report-json.js"),
    import("../../experiments/report-terminal.js"),
    import("../../experiments/suite.js"),
    import("./worker.js"),
  ]);
  const suiteFile = suiteArgument === BUNDLED_SUITE ? bundledSuitePath() : suiteArgument;
  const suite = loadSuite(suiteFile);
  const experimentId = flags.experiment ?? experimentIdOf(suite);
  const location = context.database(command);
  const lab =
    flags.workers !== undefined
      ? await workers.openQueuedLab(location)
      : await openLab(location, io.stderr);
  const providers = context.providers(command);
  const stop = workers.listenForStop();
  const progress = new ProgressReporter(io.stderr);
  let announced = false;
  const onProgress = (state: ExperimentProgress) => {
    if (!announced) {
      announced = true;
      const resumed =
        state.skipped === 0
          ? ""
          : state.skipped === state.total
            ? " (all already finished: reporting)"
            : ` (${state.skipped} already finished: resuming)`;
      const on =
        flags.workers === undefined
          ? ""
          : ` on ${flags.workers} worker${flags.workers === 1 ? "" : "s"}`;
      io.stderr.write(`experiment ${experimentId}: ${state.total} runs${on}${resumed}\n`);
    }
    progress.update(state);
  };
  const common = {
    store: lab.store,
    suite,
    suiteFile,
    experimentId,
    signal: stop.signal,
    providers,
    // The table needs only the cells; a report file lists every run.
    keep_runs: flags.json === true || flags.out !== undefined,
    onProgress,
  };
  try {
    const outcome: ExperimentOutcome & { unfinished?: number } =
      lab.queue === null || flags.workers === undefined
        ? await (await import("../../experiments/run-experiment.js")).runExperiment({
            ...common,
            ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
            ...(flags.repetitions !== undefined ? { repetitions: flags.repetitions } : {}),
          })
        : await workers.benchOnWorkers(
            { ...common, queue: lab.queue },
            {
              workers: flags.workers,
              repetitions: flags.repetitions ?? suite.repetitions,
              concurrency: flags.concurrency,
              lease: flags.lease,
              location,
              command,
              io,
              onNote: (line) => {
                progress.finish();
                io.stderr.write(`agent-lab: ${terminalSafe(line)}\n`);
              },
            },
          );
    progress.finish();
    const { report } = outcome;
    if (flags.out !== undefined)
      writeReports(io, flags.out, renderJsonReport(report), renderHtmlReport(report));
    io.stdout.write(flags.json ? renderJsonReport(report) : renderTerminalReport(report));
    if (outcome.stopped) {
      io.stderr.write(
        `stopped: ${outcome.finished} of ${outcome.total} runs finished; run the same command again to resume\n`,
      );
      return SIGNAL_EXIT_CODES[stop.stoppedBy() ?? "SIGINT"];
    }
    if (outcome.errors.length > 0) {
      for (const error of outcome.errors.slice(0, 3)) {
        io.stderr.write(
          `agent-lab: run ${terminalSafe(`${error.run_key} could not run: ${error.message}`)}\n`,
        );
      }
      io.stderr.write(
        `agent-lab: ${outcome.errors.length} of ${outcome.total} runs could not run; run the same command again to retry them\n`,
      );
      return 1;
    }
    if (outcome.unfinished !== undefined && outcome.unfinished > 0) {
      io.stderr.write(
        `agent-lab: the workers ended with ${outcome.unfinished} of ${outcome.total} runs unfinished; run the same command again to resume\n`,
      );
      return 1;
    }
    return 0;
  } finally {
    progress.finish();
    stop.dispose();
    await providers.tools.close();
    await lab.close();
  }
}

/** The store alone, as `bench` without workers has always opened it (with its notes). */
async function openLab(
  location: DatabaseLocation,
  notes: CliIo["stderr"],
): Promise<{ store: SessionStore; queue: RunQueue | null; close(): Promise<void> }> {
  const store = await openStoreForWriting(location, notes);
  return { store, queue: null, close: async () => store.close() };
}

function writeReports(io: CliIo, folder: string, json: string, html: string): void {
  mkdirSync(folder, { recursive: true });
  const jsonPath = join(folder, "report.json");
  const htmlPath = join(folder, "report.html");
  writeFileSync(jsonPath, json);
  writeFileSync(htmlPath, html);
  io.stderr.write(`reports written: ${jsonPath} and ${htmlPath}\n`);
}
