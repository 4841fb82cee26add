/** The instant stored in `*_at` text columns: ISO 8601 UTC with milliseconds, which sorts as it reads. */
export function nowIso(): string {
  return new Date().toISOString();
}
