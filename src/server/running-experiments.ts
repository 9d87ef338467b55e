import { AgentLabError } from "../domain/errors.js";
import type { ExperimentRunProgress } from "../domain/experiment-live.js";
import { settledWithin } from "./active-turns.js";

/**
 * The experiments this server is running, one per experiment id: a second start is refused (409)
 * before anything runs, watchers get the progress so far and then every change, and shutting the
 * server down cancels each and waits until its runs are stored.
 */

export type { ExperimentRunProgress } from "../domain/experiment-live.js";

/** What the runner says when it is over (without the report: GET /api/experiments/:id has it). */
export interface ExperimentRunOutcome {
  experiment_id: string;
  total: number;
  skipped: number;
  finished: number;
  /** Runs that could not run at all (left incomplete, so starting again retries them). */
  errors: { run_key: string; message: string }[];
}

export type ExperimentRunEvent =
  | { type: "progress"; progress: ExperimentRunProgress }
  | { type: "done"; outcome: ExperimentRunOutcome }
  | { type: "cancelled"; progress: ExperimentRunProgress }
  | { type: "error"; message: string };

export type ExperimentRunEnd = Exclude<ExperimentRunEvent, { type: "progress" }>;

export class ExperimentRunningError extends AgentLabError {
  readonly code = "experiment_running" as const;
  constructor(readonly experimentId: string) {
    super(
      `experiment ${experimentId} is already running in this server; watch it (GET /api/experiments/${experimentId}/events) or cancel it first`,
    );
  }
}

export class ExperimentNotRunningError extends AgentLabError {
  readonly code = "not_found" as const;
  constructor(readonly experimentId: string) {
    super(`experiment ${experimentId} is not running in this server`);
  }
}

type Listener = (event: ExperimentRunEvent) => void;

/** One running experiment: its cancellation, its progress, and who is watching. */
export class RunningExperiment {
  readonly controller = new AbortController();
  #progress: ExperimentRunProgress;
  #end: ExperimentRunEnd | null = null;
  readonly #listeners = new Set<Listener>();
  readonly #ended: Promise<void>;
  #resolveEnded: () => void = () => {};

  constructor(
    readonly id: string,
    progress: ExperimentRunProgress,
  ) {
    this.#progress = { ...progress };
    this.#ended = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get progress(): ExperimentRunProgress {
    return { ...this.#progress };
  }

  get end(): ExperimentRunEnd | null {
    return this.#end;
  }

  /** Resolves once the experiment has ended and its runs are stored. */
  get ended(): Promise<void> {
    return this.#ended;
  }

  update(progress: ExperimentRunProgress): void {
    if (this.#end !== null) return;
    this.#progress = { ...progress };
    this.#emit({ type: "progress", progress: this.progress });
  }

  finish(end: ExperimentRunEnd): void {
    if (this.#end !== null) return;
    this.#end = end;
    this.#emit(end);
    this.#listeners.clear();
    this.#resolveEnded();
  }

  /**
   * The events from now on (the current progress first, then each change, then the end); the
   * returned function stops them. A watcher arriving after the end gets the progress and the end.
   */
  watch(listener: Listener): () => void {
    listener({ type: "progress", progress: this.progress });
    if (this.#end !== null) {
      listener(this.#end);
      return () => {};
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(event: ExperimentRunEvent): void {
    for (const listener of [...this.#listeners]) listener(event);
  }
}

/** How many ended experiments are kept for watchers that connect after the end. */
const KEPT_ENDED = 32;

export class RunningExperiments {
  readonly #running = new Map<string, RunningExperiment>();
  /** The latest ended ones, oldest first: a client that starts a quick experiment and then
   * connects to its events still sees how it ended, not just the store's counts. */
  readonly #ended = new Map<string, RunningExperiment>();
  /** Event streams still writing: shutdown lets them send their end before connections close. */
  readonly #streams = new Set<Promise<void>>();

  /** Notes an event stream; call the returned function once it has written its last event. */
  openStream(): () => void {
    let close = () => {};
    const closed = new Promise<void>((resolve) => {
      close = resolve;
    });
    this.#streams.add(closed);
    return () => {
      this.#streams.delete(closed);
      close();
    };
  }

  get(experimentId: string): RunningExperiment | undefined {
    return this.#running.get(experimentId);
  }

  /** The running experiment of that id, else the latest one that ended in this server. */
  watchable(experimentId: string): RunningExperiment | undefined {
    return this.#running.get(experimentId) ?? this.#ended.get(experimentId);
  }

  /**
   * Claims the id (synchronously, so two requests cannot both start it) and runs `run` with the
   * claim; the claim is released when `run` settles, its end (or failure) told to the watchers.
   */
  start(
    experimentId: string,
    progress: ExperimentRunProgress,
    run: (experiment: RunningExperiment) => Promise<ExperimentRunEnd>,
    onError: (error: unknown) => void,
  ): RunningExperiment {
    if (this.#running.has(experimentId)) throw new ExperimentRunningError(experimentId);
    const experiment = new RunningExperiment(experimentId, progress);
    this.#running.set(experimentId, experiment);
    void run(experiment)
      .catch((error: unknown): ExperimentRunEnd => {
        onError(error);
        return { type: "error", message: error instanceof Error ? error.message : String(error) };
      })
      .then((end) => {
        this.#running.delete(experimentId);
        this.#ended.delete(experimentId);
        this.#ended.set(experimentId, experiment);
        for (const id of this.#ended.keys()) {
          if (this.#ended.size <= KEPT_ENDED) break;
          this.#ended.delete(id);
        }
        experiment.finish(end);
      });
    return experiment;
  }

  /** Stops starting runs and cancels the running ones; false when nothing runs under that id. */
  cancel(experimentId: string, reason: Error): boolean {
    const experiment = this.#running.get(experimentId);
    if (experiment === undefined) return false;
    experiment.controller.abort(reason);
    return true;
  }

  /**
   * Cancels every running experiment; resolves when each has stored its runs and every event
   * stream has sent its end, or after `timeoutMs`.
   */
  async cancelAll(reason: Error, timeoutMs: number): Promise<void> {
    const experiments = [...this.#running.values()];
    for (const experiment of experiments) experiment.controller.abort(reason);
    const ended = Promise.all(experiments.map((experiment) => experiment.ended)).then(() =>
      Promise.all([...this.#streams]),
    );
    await settledWithin(ended, timeoutMs);
  }
}
