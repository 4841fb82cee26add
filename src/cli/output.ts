/** Output for people by default, JSON for scripts with --json; errors are one readable sentence. */
export class CliError extends Error {
  override name = "CliError";
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

import { cliIo } from "./io.ts";

export function emit(json: boolean, data: unknown, text: () => string): void {
  cliIo().stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${text()}\n`);
}

/** Fixed-width columns for list output. */
/** A table of `rows`, one column per entry of `columns`: its header, then how a row fills it. */
export function columnsTable<Row>(
  rows: readonly Row[],
  columns: Record<string, (row: Row) => string>,
): string {
  const cells = Object.values(columns);
  return table(
    Object.keys(columns),
    rows.map((row) => cells.map((cell) => cell(row))),
  );
}

export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return "(none)";
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}
