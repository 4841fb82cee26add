/** The outcome of the page's last action, shown and announced politely to screen readers. */
export function StatusLine(props: { text: string }) {
  return (
    <p role="status" aria-live="polite">
      {props.text}
    </p>
  );
}
