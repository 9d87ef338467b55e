import { terminalSafe } from "../domain/terminal-text.js";
/** How far an experiment is, as `runExperiment` reports it, and how a terminal shows that. */

/** Which run just finished. */
export interface RunLabel {
  run_key: string;
  cell: string;
  cell_label: string;
  scenario: string;
  repetition: number;
}

export interface ExperimentProgress {
  /** Planned runs finished, skipped ones included. */
  done: number;
  total: number;
  /** Runs already complete in the store when the experiment started (resume). */
  skipped: number;
  /** Runs with a failed turn (a provider or runtime failure) or that could not run at all. */
  failed_runs: number;
  /** The run that just finished; null before any did. */
  current: RunLabel | null;
}

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

const BAR_WIDTH = 10;
/** Without a terminal: a line per tenth of the runs, and at least this often. */
const PLAIN_INTERVAL_MS = 10_000;

/** `12s`, `3m 05s`, `1h 02m`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, "0")}m`;
}

/** Finished runs after the first one seen before an ETA is shown (see ProgressReporter). */
const MIN_RUNS_FOR_ETA = 2;

/** `[#####-----] 42/120 runs · 3 skipped · 1 failed · cell … · ETA 12s` */
export function formatProgressLine(progress: ExperimentProgress, etaMs: number | null): string {
  const share = progress.total === 0 ? 1 : progress.done / progress.total;
  const filled = Math.min(BAR_WIDTH, Math.floor(share * BAR_WIDTH));
  const parts = [
    `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${progress.done}/${progress.total} runs`,
  ];
  if (progress.skipped > 0) parts.push(`${progress.skipped} skipped`);
  if (progress.failed_runs > 0) parts.push(`${progress.failed_runs} failed`);
  if (progress.current !== null) parts.push(`cell ${progress.current.cell_label}`);
  if (etaMs !== null && progress.done < progress.total) parts.push(`ETA ${formatDuration(etaMs)}`);
  return parts.join(" · ");
}

/**
 * Shows progress on a stream: on a terminal one line rewritten in place, otherwise plain lines
 * now and then (the first finished run, every tenth of the runs, every ten seconds, the end).
 */
export class ProgressReporter {
  readonly #stream: ProgressStream;
  readonly #now: () => number;
  #startedAt: number | null = null;
  /** When the first finished run was seen, and how many had finished then. */
  #firstRunSeen: { at: number; ran: number } | null = null;
  #skippedAtStart = 0;
  #drawn = false;
  #lastLineAt = 0;
  #lastBucket = 0;
  #printedFirst = false;

  constructor(stream: ProgressStream, now: () => number = () => performance.now()) {
    this.#stream = stream;
    this.#now = now;
  }

  update(progress: ExperimentProgress): void {
    const at = this.#now();
    if (this.#startedAt === null) {
      this.#startedAt = at;
      this.#skippedAtStart = progress.skipped;
      this.#lastLineAt = at;
    }
    // Scenario and config names come from a suite file.
    const line = terminalSafe(formatProgressLine(progress, this.#eta(progress, at)));
    if (this.#stream.isTTY) {
      // A pseudo-terminal without a size reports 0 columns.
      const columns = this.#stream.columns ?? 0;
      const width = (columns >= 20 ? columns : 100) - 1;
      const shown = line.length > width ? `${line.slice(0, width - 1)}…` : line;
      this.#stream.write(`\r${shown}\x1b[K`);
      this.#drawn = true;
      return;
    }
    const bucket = progress.total === 0 ? 10 : Math.floor((progress.done / progress.total) * 10);
    const finishedOne = progress.current !== null;
    const due =
      (finishedOne && !this.#printedFirst) ||
      bucket > this.#lastBucket ||
      at - this.#lastLineAt >= PLAIN_INTERVAL_MS ||
      (progress.done === progress.total && finishedOne);
    if (!due) return;
    if (finishedOne) this.#printedFirst = true;
    this.#lastBucket = bucket;
    this.#lastLineAt = at;
    this.#stream.write(`${line}\n`);
  }

  /** Ends the terminal line, so what follows starts on its own line. */
  finish(): void {
    if (this.#drawn) this.#stream.write("\n");
    this.#drawn = false;
  }

  /**
   * The time left at the pace of the runs finished since the first one seen: the time before it is
   * start-up (workers starting, a model loading, the JIT), which a rate from the start charged to
   * every run left: 4 workers on PostgreSQL showed 13 minutes for a run of 20 seconds. Shown once
   * MIN_RUNS_FOR_ETA more runs have finished, so that runs ending together make no pace of zero.
   */
  #eta(progress: ExperimentProgress, at: number): number | null {
    const ran = progress.done - this.#skippedAtStart;
    if (ran <= 0) return null;
    if (this.#firstRunSeen === null) {
      this.#firstRunSeen = { at, ran };
      return null;
    }
    const since = ran - this.#firstRunSeen.ran;
    if (since < MIN_RUNS_FOR_ETA) return null;
    return ((at - this.#firstRunSeen.at) / since) * (progress.total - progress.done);
  }
}
