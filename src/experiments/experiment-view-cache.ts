import type { CellRun } from "../domain/experiment.js";
import type { SessionStore } from "../store/session-store.js";
import {
  type CellRunOrder,
  cellRunsOf,
  ExperimentNotFoundError,
  experimentViewFromStore,
  failedFirst,
} from "./experiment-report-from-store.js";
import type { ExperimentView } from "./report-build.js";

interface CachedView {
  stamp: string;
  view: ExperimentView;
  /**
   * The report's JSON (with or without its runs) as UTF-8 bytes, made on the first request for
   * each: sent as they are, where a text is measured and encoded again for every response (a
   * socket's string write also reserves three bytes a character, 150 MB for a 50,000-run report).
   */
  bodies: Map<boolean, Uint8Array<ArrayBuffer>>;
  /**
   * Each cell's runs in each order (cellRunsOf, or failedFirst of that), listed on the first
   * request for one of its pages: a page is then a slice, not a pass over every run.
   */
  cells: Map<CellRunOrder, Map<string, readonly CellRun[]>>;
}

/**
 * Experiment reports, built once and served until the experiment changes: each request reads the
 * experiment's revision (one row of the summaries SQLite keeps, moved by every write that moves one
 * of its sessions' updated_at: a run starting or finishing, a session added or deleted; a running
 * turn's middle rounds do not, and a report shows nothing of an unfinished run that they change)
 * and rebuilds only when it differs. Bounded: the
 * least recently used report leaves once more than `capacity` are kept.
 */
export class ExperimentViewCache {
  readonly #store: SessionStore;
  readonly #capacity: number;
  readonly #entries = new Map<string, CachedView>();
  /**
   * The build under way for each experiment, and the revision it was asked for: at most one at a
   * time (a build yields to the event loop between its slices, so builds of one experiment would
   * otherwise run side by side, each holding its runs: ten requests while runs finished made ten).
   */
  readonly #building = new Map<string, { stamp: string; cached: Promise<CachedView> }>();

  readonly #maxRuns: number;

  /**
   * At most `capacity` reports, and at most `maxRuns` runs across them (a 50,000-run report holds
   * ~100 MB with its JSON), though the latest report is always kept.
   */
  constructor(store: SessionStore, capacity = 4, maxRuns = 100_000) {
    this.#store = store;
    this.#capacity = capacity;
    this.#maxRuns = maxRuns;
  }

  /** The view, and whether it came from the cache. Throws ExperimentNotFoundError. */
  async get(experimentId: string): Promise<{ view: ExperimentView; hit: boolean }> {
    const entry = await this.#entry(experimentId);
    return { view: entry.view, hit: entry.hit };
  }

  /**
   * The view's JSON text, `serialize(view)`, as UTF-8 bytes kept beside it per `runs` (the report
   * with or without its runs): a report of thousands of runs is megabytes of JSON, so a hit sends
   * the bytes made once.
   */
  async body(
    experimentId: string,
    runs: boolean,
    serialize: (view: ExperimentView) => string,
  ): Promise<{ body: Uint8Array<ArrayBuffer>; hit: boolean }> {
    const entry = await this.#entry(experimentId);
    let body = entry.cached.bodies.get(runs);
    if (body === undefined) {
      body = Buffer.from(serialize(entry.view), "utf8");
      entry.cached.bodies.set(runs, body);
    }
    return { body, hit: entry.hit };
  }

  /**
   * A cell's runs (see cellRunsOf) in `order`, listed once per report and order: a drill-down
   * page is then a slice of them, not a pass over every run of the experiment. Throws
   * ExperimentNotFoundError.
   */
  async cellRuns(
    experimentId: string,
    cell: string,
    order: CellRunOrder = "run",
  ): Promise<{ runs: readonly CellRun[]; hit: boolean }> {
    const entry = await this.#entry(experimentId);
    const { cells } = entry.cached;
    const kept = cells.get(order)?.get(cell);
    if (kept !== undefined) return { runs: kept, hit: entry.hit };
    const listed = cells.get("run")?.get(cell) ?? cellRunsOf(entry.view, cell);
    const runs = order === "failed_first" ? failedFirst(listed) : listed;
    for (const [into, list] of [
      ["run", listed],
      [order, runs],
    ] as const) {
      const lists = cells.get(into) ?? new Map<string, readonly CellRun[]>();
      lists.set(cell, list);
      cells.set(into, lists);
    }
    return { runs, hit: entry.hit };
  }

  /**
   * The cached view when it is current; else the build under way for this revision, or a new
   * one. A request for a newer revision than the build under way waits for that build, then
   * looks again: by then its view may be cached, or it joins the build another waiter started
   * (which read the revision after this request did), so it waits for two builds at most.
   */
  async #entry(experimentId: string) {
    let waited = false;
    for (;;) {
      const stamp = await this.#stamp(experimentId);
      const known = this.#entries.get(experimentId);
      if (known !== undefined && known.stamp === stamp) {
        this.#entries.delete(experimentId);
        this.#entries.set(experimentId, known);
        return { view: known.view, cached: known, hit: true };
      }
      const under = this.#building.get(experimentId);
      if (under !== undefined && (under.stamp === stamp || waited)) {
        const cached = await under.cached;
        return { view: cached.view, cached, hit: false };
      }
      if (under !== undefined) {
        await under.cached.catch(() => {});
        waited = true;
        continue;
      }
      const cached = this.#build(experimentId, stamp).finally(() => {
        if (this.#building.get(experimentId)?.cached === cached)
          this.#building.delete(experimentId);
      });
      this.#building.set(experimentId, { stamp, cached });
      const built = await cached;
      return { view: built.view, cached: built, hit: false };
    }
  }

  async #build(experimentId: string, stamp: string): Promise<CachedView> {
    const view = await experimentViewFromStore(this.#store, experimentId);
    // Stamped as read before the build: a change during it makes the next request rebuild.
    const cached: CachedView = { stamp, view, bodies: new Map(), cells: new Map() };
    // Last in the LRU order, which the eviction below reads from the oldest.
    this.#entries.delete(experimentId);
    this.#entries.set(experimentId, cached);
    const runsOf = (entry: CachedView) => entry.view.report.runs.length + entry.view.pending.length;
    let runs = 0;
    for (const entry of this.#entries.values()) runs += runsOf(entry);
    for (const [oldest, entry] of this.#entries) {
      if (oldest === experimentId) break;
      if (this.#entries.size <= this.#capacity && runs <= this.#maxRuns) break;
      this.#entries.delete(oldest);
      runs -= runsOf(entry);
    }
    return cached;
  }

  async #stamp(experimentId: string): Promise<string> {
    const { items } = await this.#store.listExperimentSummaries({
      experiment: experimentId,
      limit: 1,
    });
    const summary = items[0];
    if (summary === undefined) {
      throw new ExperimentNotFoundError(`experiment not found: ${experimentId}`);
    }
    return String(summary.revision);
  }
}
