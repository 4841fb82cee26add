import { ErrorBox } from "./error-box.tsx";
import { Loading } from "./loading.tsx";
import { type Column, DataTable } from "./table.tsx";
import type { Loaded } from "./use-api.ts";

/**
 * A table of a resource loaded from the API: the failure (with a retry) and a status line until the
 * first answer comes, then a row per item (or the table's `empty` line). The rows stay
 * on screen while a reload is under way and when it fails, beside its error.
 */
export function ResourceTable<Row>(props: {
  /** The rows, as the API answers them (mapLoaded picks them out of a larger answer). */
  loaded: Loaded<Row[]>;
  /** What is loading, for the status line ("Loading users…"). */
  what: string;
  caption: string;
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
  empty?: string;
}) {
  const { loaded, what, ...table } = props;
  return (
    <>
      {loaded.error !== undefined && <ErrorBox error={loaded.error} onRetry={loaded.reload} />}
      {loaded.loading && loaded.data === undefined && <Loading what={what} />}
      {loaded.data !== undefined && <DataTable {...table} rows={loaded.data} />}
    </>
  );
}
