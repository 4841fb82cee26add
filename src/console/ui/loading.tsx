/** A polite "loading" status while data is on its way. */
export function Loading(props: { what?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading{props.what ? ` ${props.what}` : ""}…
    </p>
  );
}
