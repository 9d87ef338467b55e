import type { SessionStore } from "../store/session-store.js";
import {
  ExperimentNotFoundError,
  experimentViewFromStore,
} from "./experiment-report-from-store.js";
import type { ExperimentView } from "./report-build.js";

/**
 * Experiment reports, built once and served until the experiment changes: each request reads a
 * cheap stamp from the experiment_id index (its session count and latest `updated_at`, which a run
 * finishing, a session added or deleted all move) and rebuilds only when it differs. Bounded: the
 * least recently used report leaves once more than `capacity` are kept.
 */
export class ExperimentViewCache {
  readonly #store: SessionStore;
  readonly #capacity: number;
  readonly #entries = new Map<string, { stamp: string; view: ExperimentView; body?: string }>();

  constructor(store: SessionStore, capacity = 4) {
    this.#store = store;
    this.#capacity = capacity;
  }

  /** The view, and whether it came from the cache. Throws ExperimentNotFoundError. */
  async get(experimentId: string): Promise<{ view: ExperimentView; hit: boolean }> {
    const entry = await this.#entry(experimentId);
    return { view: entry.view, hit: entry.hit };
  }

  /**
   * The view with `serialize(view)` kept beside it: a report of thousands of runs is megabytes of
   * JSON, so a hit sends the text made once.
   */
  async body(
    experimentId: string,
    serialize: (view: ExperimentView) => string,
  ): Promise<{ body: string; hit: boolean }> {
    const entry = await this.#entry(experimentId);
    entry.cached.body ??= serialize(entry.view);
    return { body: entry.cached.body, hit: entry.hit };
  }

  async #entry(experimentId: string) {
    const stamp = await this.#stamp(experimentId);
    const known = this.#entries.get(experimentId);
    this.#entries.delete(experimentId);
    if (known !== undefined && known.stamp === stamp) {
      this.#entries.set(experimentId, known);
      return { view: known.view, cached: known, hit: true };
    }
    const view = await experimentViewFromStore(this.#store, experimentId);
    // Stamped as read before the build: a change during it makes the next request rebuild.
    const cached = { stamp, view };
    this.#entries.set(experimentId, cached);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#capacity) break;
      this.#entries.delete(oldest);
    }
    return {
      view,
      cached: cached as { stamp: string; view: ExperimentView; body?: string },
      hit: false,
    };
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
    return `${summary.sessions}|${summary.last_updated_at}`;
  }
}
