/**
 * Maven version ranges (`[1.0,2.0)`, `(,1.5]`, `[1.2]`, unions `[1,2),[3,4)`), as dependency versions and
 * JDK profile activation use them.
 */

interface Bound {
  version: string;
  inclusive: boolean;
}
interface Restriction {
  lower?: Bound;
  upper?: Bound;
}
type VersionRange = Restriction[];

export const isVersionRange = (version: string): boolean => /^[[(]/.test(version.trim());

/** Parses a range; undefined when the text is not one. */
export function parseVersionRange(text: string): VersionRange | undefined {
  const restrictions: Restriction[] = [];
  const pattern = /([[(])([^\])]*)([\])])\s*,?\s*/gy;
  const input = text.trim();
  let match: RegExpExecArray | null;
  let consumed = 0;
  // biome-ignore lint/suspicious/noAssignInExpressions: the regex walks the input with the sticky flag
  while ((match = pattern.exec(input)) !== null) {
    consumed = pattern.lastIndex;
    const [, open, body = "", close] = match;
    const parts = body.split(",").map((p) => p.trim());
    if (parts.length === 1) {
      if (open !== "[" || close !== "]" || !parts[0]) return undefined;
      restrictions.push({
        lower: { version: parts[0], inclusive: true },
        upper: { version: parts[0], inclusive: true },
      });
    } else if (parts.length === 2) {
      restrictions.push({
        lower: parts[0] ? { version: parts[0], inclusive: open === "[" } : undefined,
        upper: parts[1] ? { version: parts[1], inclusive: close === "]" } : undefined,
      });
    } else return undefined;
  }
  return consumed === input.length && restrictions.length > 0 ? restrictions : undefined;
}

export function rangeContains(
  range: VersionRange,
  version: string,
  compare: (a: string, b: string) => number,
): boolean {
  return range.some((r) => {
    if (r.lower) {
      const c = compare(version, r.lower.version);
      if (c < 0 || (c === 0 && !r.lower.inclusive)) return false;
    }
    if (r.upper) {
      const c = compare(version, r.upper.version);
      if (c > 0 || (c === 0 && !r.upper.inclusive)) return false;
    }
    return true;
  });
}
