/** The text half of a tool's answer: Markdown tables, paging notes and the small helpers the tools write with. */
import type { Page } from "./tool-kit.ts";

const cell = (value: unknown): string => {
  const text = value === null || value === undefined || value === "" ? "-" : String(value);
  // Most cells hold neither: the two replacements are skipped for them (every tool answer renders a table).
  if (!text.includes("|") && !text.includes("\n")) return text;
  return text.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ");
};

/** A Markdown table. */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const lines = [`| ${headers.join(" | ")} |`, `|${headers.map(() => "---").join("|")}|`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(" | ")} |`);
  return lines.join("\n");
}

/** "No more." / "More: call again with skip=N." for a paged answer. */
export function pageNote(page: Page, what: string): string {
  if (page.hasMore) {
    return `Showing ${what} ${page.skip + 1}-${page.skip + page.returned}; more follow: call again with skip=${page.nextSkip}.`;
  }
  if (page.skip > 0 && page.returned === 0)
    return `No ${what} at skip=${page.skip} (past the end of the list).`;
  return "";
}

export const plural = (count: number, one: string, many = `${one}s`) =>
  `${count} ${count === 1 ? one : many}`;

export const joinLines = (...parts: (string | false | null | undefined)[]) =>
  parts.filter((p): p is string => typeof p === "string" && p !== "").join("\n\n");

/** Shortens a long text for a table cell. */
export const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
