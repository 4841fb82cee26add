/** Splits rows into statement-sized batches (both databases cap bound parameters per statement). */
export function* chunks<T>(rows: readonly T[], size = 400): Generator<T[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}
