/** What the Applications pages read from their URL: route parameters, the query string, list offsets, "as of". */
import { useLocation, useRoute } from "preact-iso";

/** The page's query string as state: reading it, and replacing some of its keys (history entry). */
export function useQueryState(): [
  Record<string, string>,
  (changes: Record<string, string | undefined>) => void,
] {
  const location = useLocation();
  const query = location.query;
  const set = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...query, ...changes }))
      if (v !== undefined && v !== "") next.set(k, v);
    const search = next.toString();
    location.route(`${location.path}${search ? `?${search}` : ""}`);
  };
  return [query, set];
}

/** What every page of one application reads first: its route's parameters and name, the query, the list offset. */
export function useAppPage() {
  const { params } = useRoute();
  const [query, setQuery] = useQueryState();
  const skip = intParam(query.skip, 0);
  // The list pager's move: a new offset is a new history entry.
  const onSkip = (next: number) => setQuery({ skip: String(next) });
  return { params, name: params.name ?? "", query, setQuery, skip, onSkip };
}

/** The REST `date` for a picked day (end of the day, UTC); undefined for the latest analysis. */
export const dateOfDay = (day: string | undefined): string | undefined => {
  if (!day) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(day)) return `${day}T23:59:59Z`;
  // A link from the timeline carries the analysis's exact instant.
  return /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(day) ? day : undefined;
};

export const intParam = (value: string | undefined, fallback: number): number => {
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : fallback;
};
