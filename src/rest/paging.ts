/** `limit` and `skip`, as every list operation of the REST API reads them. */
import type { FastifyReply } from "fastify";
import { REPLIED, take } from "./context.ts";
import { parseLimit, parseSkip } from "./params.ts";

/** `limit` and `skip` of a list operation; `fallback` makes `limit` optional. */
export function readPaging(
  query: Record<string, unknown>,
  reply: FastifyReply,
  fallback?: number,
): { limit: number; skip: number } | typeof REPLIED {
  const limit = take(
    reply,
    parseLimit(query.limit, fallback === undefined ? { required: true } : { required: false, fallback }),
  );
  if (limit === REPLIED) return REPLIED;
  const skip = take(reply, parseSkip(query.skip));
  if (skip === REPLIED) return REPLIED;
  return { limit, skip };
}
