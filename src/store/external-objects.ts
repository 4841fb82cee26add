import type { ExternalObjectsTable } from "./schema.ts";

/** An external object as the REST API writes it: what an application refers to in one of its packages. */
export interface ExternalObjectRecord {
  fullName: string;
  id: string;
  mangling: string;
  name: string;
  type: string;
  typeId: string;
}

/** The columns of `external_objects as eo` that make an ExternalObjectRecord (toExternalObject). */
export const EXTERNAL_OBJECT_COLUMNS = [
  "eo.object_id",
  "eo.name",
  "eo.full_name",
  "eo.mangling",
  "eo.type",
  "eo.type_id",
] as const;

type ExternalObjectColumns = Pick<
  ExternalObjectsTable,
  "object_id" | "name" | "full_name" | "mangling" | "type" | "type_id"
>;

export function toExternalObject(r: ExternalObjectColumns): ExternalObjectRecord {
  return {
    fullName: r.full_name,
    id: r.object_id,
    mangling: r.mangling,
    name: r.name,
    type: r.type,
    typeId: r.type_id,
  };
}
