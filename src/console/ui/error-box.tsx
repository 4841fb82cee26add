import { ApiError } from "../api.ts";

/** An error as one readable sentence (the problem's detail), announced to screen readers. */
export function ErrorBox(props: { error: unknown; onRetry?: () => void }) {
  const { error } = props;
  const title = error instanceof ApiError ? error.problem.title : "Something went wrong";
  const detail =
    error instanceof ApiError
      ? (error.problem.detail ?? "")
      : error instanceof Error
        ? error.message
        : String(error);
  return (
    <div class="error-box" role="alert">
      <strong>{title}</strong>
      {detail && <p>{detail}</p>}
      {props.onRetry && (
        <button type="button" onClick={props.onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}
