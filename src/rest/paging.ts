/** `limit` and `skip`, as every list operation of the REST API reads them. */
import { take } from "./context.ts";
import { parseLimit, parseSkip } from "./params.ts";

/** `limit` and `skip` of a list operation; `fallback` makes `limit` optional. 400 when either is bad. */
export function readPaging(
  query: Record<string, unknown>,
  fallback?: number,
): { limit: number; skip: number } {
  const limit = take(
    parseLimit(query.limit, fallback === undefined ? { required: true } : { required: false, fallback }),
  );
  const skip = take(parseSkip(query.skip));
  return { limit, skip };
}
