import { useCallback, useEffect, useRef, useState } from "react";

export interface Resource<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  /** Loads again; the data shown stays until the new data arrives. */
  reload: () => Promise<void>;
}

/**
 * Loads data for the current `key`, cancelling a load that a newer one replaced, and keeps the
 * last data while reloading so screens do not flash.
 */
export function useResource<T>(
  key: string | null,
  load: (signal: AbortSignal) => Promise<T>,
): Resource<T> {
  const [state, setState] = useState<{
    key: string | null;
    data: T | null;
    error: unknown;
    loading: boolean;
  }>({
    key,
    data: null,
    error: null,
    loading: key !== null,
  });
  const loadRef = useRef(load);
  loadRef.current = load;
  const controllerRef = useRef<AbortController | null>(null);

  const run = useCallback(async (target: string | null) => {
    controllerRef.current?.abort();
    if (target === null) return;
    const controller = new AbortController();
    controllerRef.current = controller;
    setState((previous) => ({
      key: target,
      data: previous.key === target ? previous.data : null,
      error: null,
      loading: true,
    }));
    try {
      const data = await loadRef.current(controller.signal);
      if (!controller.signal.aborted) setState({ key: target, data, error: null, loading: false });
    } catch (error) {
      if (!controller.signal.aborted) {
        setState((previous) => ({ ...previous, key: target, error, loading: false }));
      }
    }
  }, []);

  useEffect(() => {
    void run(key);
    return () => controllerRef.current?.abort();
  }, [key, run]);

  const reload = useCallback(() => run(key), [key, run]);
  const current = state.key === key;
  return {
    data: current ? state.data : null,
    error: current ? state.error : null,
    loading: current ? state.loading : key !== null,
    reload,
  };
}
