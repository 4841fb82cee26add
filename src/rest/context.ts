/** What every REST route is given (RestDeps), and the checked parameters' types the routes share. */
import type { Kysely } from "kysely";
import type { Principal } from "../auth/principal.ts";
import type { Database } from "../store/schema.ts";

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
