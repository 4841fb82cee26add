/** Previous/next over an offset-paged list. */
export function Pager(props: {
  offset: number;
  limit: number;
  total?: number | undefined;
  /** When the total is unknown: whether a next page exists. */
  hasMore?: boolean;
  onChange: (offset: number) => void;
  label?: string;
}) {
  const { offset, limit, total } = props;
  const last = total !== undefined ? Math.min(offset + limit, total) : offset + limit;
  const hasNext = total !== undefined ? offset + limit < total : (props.hasMore ?? false);
  return (
    <nav class="pager" aria-label={props.label ?? "Pages"}>
      <button
        type="button"
        disabled={offset === 0}
        onClick={() => props.onChange(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span aria-live="polite">
        {total === 0 ? "No results" : `${offset + 1}–${last}${total !== undefined ? ` of ${total}` : ""}`}
      </span>
      <button type="button" disabled={!hasNext} onClick={() => props.onChange(offset + limit)}>
        Next
      </button>
    </nav>
  );
}
