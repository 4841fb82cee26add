/** What every REST route is given (RestDeps), and the verdict-unwrapping the routes share (take). */
import type { Kysely } from "kysely";
import type { Principal } from "../auth/principal.ts";
import type { Database } from "../store/schema.ts";
import type { Parsed } from "./params.ts";
import { refuse } from "./problem.ts";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export interface RestDeps {
  db: Kysely<Database>;
}

/** `limit` and `skip` of a list operation, as validation.ts hands them over (checked, numbers). */
export interface Paging {
  limit: number;
  skip: number;
}

/** The path of an application's resources, checked. */
export type NameParams = { name: string };

/** The query of a read "as of" an instant: `date`, checked and in the store's form (or absent). */
export type AtDate = { date?: string | undefined };

/** Unwraps a parameter verdict; a failed one stops the request with 400 and its reason. */
export function take<T>(parsed: Parsed<T>): T {
  if (parsed.ok) return parsed.value;
  return refuse(400, parsed.detail);
}
