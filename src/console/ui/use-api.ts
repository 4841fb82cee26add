import { useCallback, useEffect, useState } from "preact/hooks";
import { apiGet } from "../api.ts";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** GETs a REST path (again when the path or query changes); `reload` fetches it anew. */
export function useApiGet<T>(
  path: string | undefined,
  query?: Record<string, string | number | undefined>,
): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  const key = JSON.stringify(query ?? {});
  useEffect(() => {
    if (path === undefined) return;
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    apiGet<T>(path, query).then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [path, key, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** The same load state with its data narrowed, e.g. to the list inside an answer. */
export function mapLoaded<T, U>(loaded: Loaded<T>, pick: (data: T) => U): Loaded<U> {
  return { ...loaded, data: loaded.data === undefined ? undefined : pick(loaded.data) };
}
