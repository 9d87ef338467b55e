import { useCallback, useEffect, useRef, useState } from "react";
import type { Loaded } from "./paging.js";
import { cameBack } from "./router.js";

export interface PagedList<T> {
  /** Every item of the pages read so far, in the list's order. */
  items: T[];
  /** True once the first page has arrived (an empty list is loaded too). */
  loaded: boolean;
  /**
   * The items are the previous key's, shown while the new key's first page is on its way, so a
   * filter change does not blank the list.
   */
  stale: boolean;
  /** More pages after these. */
  hasMore: boolean;
  loading: boolean;
  /** The last failure: of the first page (nothing to show) or of a later one (the rest stays). */
  error: unknown;
  /** Reads the next page and appends it; does nothing while a page is on its way or at the end. */
  loadMore: () => void;
  /** Reads the first page again, replacing what was read. */
  reload: () => void;
  /** Drops the items read that `test` picks (deleted meanwhile), here and in what Back shows. */
  remove: (test: (item: T) => boolean) => void;
}

interface State<T> {
  key: string | null;
  items: T[];
  stale: boolean;
  next_cursor: string | null;
  loaded: boolean;
  loading: boolean;
  error: unknown;
}

const initial = <T>(key: string | null): State<T> => ({
  key,
  items: [],
  stale: false,
  next_cursor: null,
  loaded: false,
  loading: key !== null,
  error: null,
});

/**
 * Lists kept for Back: the last few keys' pages read, least recently used first. A key names its
 * list and that list's filters (`sessions?q=…`, an experiment's cell), so one key's items are
 * always of one type.
 */
const kept = new Map<string, { items: unknown[]; next_cursor: string | null }>();
const KEPT_LISTS = 12;

function keep(key: string, items: unknown[], next_cursor: string | null): void {
  kept.delete(key);
  kept.set(key, { items, next_cursor });
  for (const oldest of kept.keys()) {
    if (kept.size <= KEPT_LISTS) break;
    kept.delete(oldest);
  }
}

/** The pages read of `key` when the page was reached by Back or Forward, else a first load. */
function opening<T>(key: string | null): State<T> {
  if (key === null || !cameBack()) return initial(key);
  const known = kept.get(key);
  if (known === undefined) return initial(key);
  keep(key, known.items, known.next_cursor);
  return {
    key,
    items: known.items as T[],
    stale: false,
    next_cursor: known.next_cursor,
    loaded: true,
    loading: false,
    error: null,
  };
}

/**
 * A keyset-paged list for `key` (the list and its filters): the first page loads when the key
 * changes, a page that a newer key replaced is dropped, and later pages append on `loadMore`.
 * Back to a list shows the pages it had read at once (a user who read 200 rows and opened one
 * returns to row 200, not to the first 50), then reads as many again and shows those: what
 * changed meanwhile (a session made, deleted or run) is not left out of date.
 */
export function usePagedList<T>(
  key: string | null,
  loadPage: (cursor: string | null, signal: AbortSignal) => Promise<Loaded<T>>,
): PagedList<T> {
  const [state, setState] = useState<State<T>>(() => opening(key));
  /** The key whose pages the first render restored: read again in full, not from page 1. */
  const restoredRef = useRef(state.loaded ? key : null);
  const loadRef = useRef(loadPage);
  loadRef.current = loadPage;
  const stateRef = useRef(state);
  stateRef.current = state;
  const controllerRef = useRef<AbortController | null>(null);

  const run = useCallback(async (target: string | null, cursor: string | null) => {
    controllerRef.current?.abort();
    if (target === null) return;
    const controller = new AbortController();
    controllerRef.current = controller;
    setState((previous) =>
      cursor === null
        ? previous.key === target
          ? { ...previous, loading: true, error: null }
          : {
              ...initial<T>(target),
              items: previous.items,
              loaded: previous.loaded,
              stale: previous.loaded,
            }
        : { ...previous, loading: true, error: null },
    );
    try {
      const page = await loadRef.current(cursor, controller.signal);
      if (controller.signal.aborted) return;
      setState((previous) => {
        const items = cursor === null ? page.items : [...previous.items, ...page.items];
        keep(target, items, page.next_cursor);
        return {
          key: target,
          items,
          stale: false,
          next_cursor: page.next_cursor,
          loaded: true,
          loading: false,
          error: null,
        };
      });
    } catch (error) {
      if (controller.signal.aborted) return;
      setState((previous) => ({
        ...previous,
        key: target,
        // A first page that failed leaves nothing of this key to show.
        ...(cursor === null && previous.stale ? { items: [], loaded: false, stale: false } : {}),
        loading: false,
        error,
      }));
    }
  }, []);

  /** Reads again, page by page, as many items as were restored, then shows them in their place. */
  const revalidate = useCallback(async (target: string, count: number) => {
    controllerRef.current?.abort();
    const controller = new AbortController();
    controllerRef.current = controller;
    try {
      let items: T[] = [];
      let cursor: string | null = null;
      do {
        const page: Loaded<T> = await loadRef.current(cursor, controller.signal);
        items = [...items, ...page.items];
        cursor = page.next_cursor;
      } while (cursor !== null && items.length < count);
      if (controller.signal.aborted) return;
      keep(target, items, cursor);
      setState((previous) =>
        previous.key === target && !previous.loading
          ? { ...previous, items, next_cursor: cursor, error: null }
          : previous,
      );
    } catch {
      // The pages shown stay: a Refresh or the next page says what is wrong, if it still is.
    }
  }, []);

  useEffect(() => {
    // Kept until the key changes, not cleared here: React may run this effect twice on mount.
    if (restoredRef.current === key && key !== null) {
      void revalidate(key, stateRef.current.items.length);
    } else {
      restoredRef.current = null;
      void run(key, null);
    }
    return () => controllerRef.current?.abort();
  }, [key, run, revalidate]);

  const loadMore = useCallback(() => {
    const current = stateRef.current;
    if (current.loading || current.next_cursor === null || current.key !== key) return;
    void run(key, current.next_cursor);
  }, [key, run]);
  const reload = useCallback(() => void run(key, null), [key, run]);
  const remove = useCallback((test: (item: T) => boolean) => {
    setState((previous) => {
      const items = previous.items.filter((item) => !test(item));
      // Other kept lists may hold it too (another filter's): they are read afresh instead.
      const own = previous.key === null || previous.stale ? undefined : kept.get(previous.key);
      kept.clear();
      if (own !== undefined && previous.key !== null) {
        keep(previous.key, items, previous.next_cursor);
      }
      return { ...previous, items };
    });
  }, []);

  const current = state.key === key;
  return {
    // Until the effect starts the new key's load, the last key's items stay on screen (stale).
    items: state.items,
    loaded: state.loaded,
    stale: !current || state.stale,
    hasMore: current && !state.stale && state.next_cursor !== null,
    loading: current ? state.loading : key !== null,
    error: current ? state.error : null,
    loadMore,
    reload,
    remove,
  };
}
