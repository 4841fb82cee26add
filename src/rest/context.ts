/** What every REST route is given (RestDeps), and the verdict-unwrapping the routes share (take, REPLIED). */
import type { FastifyReply } from "fastify";
import type { Kysely } from "kysely";
import type { Principal } from "../auth/principal.ts";
import type { Database } from "../store/schema.ts";
import type { Parsed } from "./params.ts";
import { sendProblem } from "./problem.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export interface RestDeps {
  db: Kysely<Database>;
}

/** Unwraps a parameter verdict, answering 400 with its reason when it failed. */
export function take<T>(reply: FastifyReply, parsed: Parsed<T>): T | typeof REPLIED {
  if (parsed.ok) return parsed.value;
  sendProblem(reply, 400, parsed.detail);
  return REPLIED;
}
export const REPLIED: unique symbol = Symbol("replied");
