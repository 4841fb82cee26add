import { ErrorBox } from "./error-box.tsx";
import { Loading } from "./loading.tsx";
import type { Loaded } from "./use-api.ts";

/**
 * What a list shows beside its data while that data stays on screen: the failure (with a retry), and a
 * status line until the first answer comes.
 */
export function LoadState(props: { loaded: Loaded<unknown>; what: string }) {
  const { loaded } = props;
  return (
    <>
      {loaded.error !== undefined && <ErrorBox error={loaded.error} onRetry={loaded.reload} />}
      {loaded.loading && !loaded.data && <Loading what={props.what} />}
    </>
  );
}
