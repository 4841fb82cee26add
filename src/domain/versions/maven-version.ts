/**
 * Maven version ordering: a port of `org.apache.maven.artifact.versioning.ComparableVersion` as shipped in
 * maven-artifact 3.8.7+/3.9 (with MNG-6964 and MNG-7644 "treat .X as -X"), checked against that jar.
 * Maven accepts any string as a version, so nothing here throws.
 *
 * Deliberate deviations, both for exotic inputs only: digits are ASCII only (Java's `Character.isDigit` also
 * accepts other Unicode digits), and the Maven 4 "combination item" rule (`X-1` read as `X1`) is not applied.
 */

type Item = IntItem | StringItem | ListItem;
interface IntItem {
  readonly kind: "int";
  readonly value: bigint;
}
interface StringItem {
  readonly kind: "string";
  readonly value: string;
}
interface ListItem {
  readonly kind: "list";
  readonly items: Item[];
}

/** A parsed Maven version; parse once with `parseMavenVersion` when comparing many times. */
type MavenVersion = ListItem;

const ZERO: IntItem = { kind: "int", value: 0n };
const QUALIFIERS = ["alpha", "beta", "milestone", "rc", "snapshot", "", "sp"];
// A Map, not an object literal: qualifiers such as "constructor" must not hit Object.prototype.
const ALIASES = new Map([
  ["ga", ""],
  ["final", ""],
  ["release", ""],
  ["cr", "rc"],
]);
const RELEASE_RANK = String(QUALIFIERS.indexOf(""));
/** Qualifiers that mark a version as not (yet) a release; compared after aliasing (cr -> rc, a1 -> alpha). */
const PRERELEASE_QUALIFIERS = new Set(["alpha", "beta", "milestone", "rc", "snapshot", "ea", "preview"]);

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const isDigitChar = (c: string): boolean => c >= "0" && c <= "9";

/** Known qualifiers rank by position; unknown ones come after all of them, lexically (Maven's trick). */
function qualifierRank(q: string): string {
  const i = QUALIFIERS.indexOf(q);
  return i === -1 ? `${QUALIFIERS.length}-${q}` : String(i);
}

function stringItem(raw: string, followedByDigit: boolean): StringItem {
  let value = raw;
  if (followedByDigit && raw.length === 1) {
    // a1 = alpha-1, b1 = beta-1, m1 = milestone-1
    value = raw === "a" ? "alpha" : raw === "b" ? "beta" : raw === "m" ? "milestone" : raw;
  }
  return { kind: "string", value: ALIASES.get(value) ?? value };
}

function parseItem(isDigit: boolean, buf: string): Item {
  // BigInt covers Maven's int/long/BigInteger items alike; leading zeros are irrelevant to the value.
  return isDigit ? { kind: "int", value: BigInt(buf) } : stringItem(buf, false);
}

function isNull(item: Item): boolean {
  if (item.kind === "int") return item.value === 0n;
  if (item.kind === "string") return qualifierRank(item.value) === RELEASE_RANK;
  return item.items.length === 0;
}

/** Drops trailing null items (0, "", empty list), looking through trailing non-null sub-lists like Maven. */
function normalize(list: ListItem): void {
  for (let i = list.items.length - 1; i >= 0; i--) {
    const item = list.items[i] as Item;
    if (isNull(item)) list.items.splice(i, 1);
    else if (item.kind !== "list") break;
  }
}

export function parseMavenVersion(version: string): MavenVersion {
  const v = version.toLowerCase();
  const root: ListItem = { kind: "list", items: [] };
  const stack: ListItem[] = [root];
  let list = root;
  const openSubList = (): void => {
    const next: ListItem = { kind: "list", items: [] };
    list.items.push(next);
    list = next;
    stack.push(next);
  };

  let isDigit = false;
  let start = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charAt(i);
    if (c === "." || c === "-") {
      list.items.push(i === start ? ZERO : parseItem(isDigit, v.slice(start, i)));
      start = i + 1;
      if (c === "-") openSubList();
    } else if (isDigitChar(c)) {
      if (!isDigit && i > start) {
        // Letters then digits: "1.0.0.X1 < 1.0.0-X2", i.e. ".X" is read as "-X".
        if (list.items.length > 0) openSubList();
        list.items.push(stringItem(v.slice(start, i), true));
        start = i;
        openSubList();
      }
      isDigit = true;
    } else {
      if (isDigit && i > start) {
        list.items.push(parseItem(true, v.slice(start, i)));
        start = i;
        openSubList();
      }
      isDigit = false;
    }
  }
  if (v.length > start) {
    if (!isDigit && list.items.length > 0) openSubList();
    list.items.push(parseItem(isDigit, v.slice(start)));
  }
  // Innermost lists first, so an emptied sub-list is itself dropped by its parent.
  for (let l = stack.pop(); l !== undefined; l = stack.pop()) normalize(l);
  return root;
}

/** `other === null` means "missing item" (the shorter version ran out), as in Maven. */
function compareItem(item: Item, other: Item | null): number {
  switch (item.kind) {
    case "int":
      if (other === null) return item.value === 0n ? 0 : 1;
      if (other.kind === "int") return item.value < other.value ? -1 : item.value > other.value ? 1 : 0;
      return 1; // 1.1 > 1-sp, 1.1 > 1-1
    case "string":
      if (other === null) return compareText(qualifierRank(item.value), RELEASE_RANK); // 1-rc < 1 < 1-sp
      if (other.kind === "string") return compareText(qualifierRank(item.value), qualifierRank(other.value));
      return -1; // 1.any < 1.1, 1.any < 1-1
    case "list":
      if (other === null) {
        // MNG-6964: the whole list decides, not only its first item.
        for (const child of item.items) {
          const r = compareItem(child, null);
          if (r !== 0) return r;
        }
        return 0;
      }
      if (other.kind === "int") return -1; // 1-1 < 1.0.x
      if (other.kind === "string") return 1; // 1-1 > 1-sp
      return compareLists(item, other);
  }
}

function compareLists(a: ListItem, b: ListItem): number {
  const n = Math.max(a.items.length, b.items.length);
  for (let i = 0; i < n; i++) {
    const l = a.items[i] ?? null;
    const r = b.items[i] ?? null;
    const result = l === null ? (r === null ? 0 : -compareItem(r, null)) : compareItem(l, r);
    if (result !== 0) return sign(result);
  }
  return 0;
}

export function compareParsedMavenVersions(a: MavenVersion, b: MavenVersion): number {
  return compareLists(a, b);
}

/** Maven ordering: negative when a < b, 0 when equivalent (1.0 == 1.0.0 == 1.0.Final), positive otherwise. */
export function compareMavenVersions(a: string, b: string): number {
  return compareLists(parseMavenVersion(a), parseMavenVersion(b));
}

function hasPrereleaseQualifier(list: ListItem): boolean {
  return list.items.some((item) =>
    item.kind === "list"
      ? hasPrereleaseQualifier(item)
      : item.kind === "string" && PRERELEASE_QUALIFIERS.has(item.value),
  );
}

export function isParsedMavenPrerelease(v: MavenVersion): boolean {
  return hasPrereleaseQualifier(v);
}

/** alpha/beta/milestone/rc/cr/snapshot/ea/preview anywhere in the version; Final/GA/RELEASE/SP are releases. */
export function isMavenPrerelease(v: string): boolean {
  return hasPrereleaseQualifier(parseMavenVersion(v));
}

/** Leading numeric items of the top-level list (missing = 0): 2.12.1 -> [2, 12], 2.0-beta9 -> [2, 0]. */
export function mavenMajorMinor(v: MavenVersion): readonly [bigint, bigint] {
  const numbers: bigint[] = [];
  for (const item of v.items) {
    if (item.kind !== "int" || numbers.length === 2) break;
    numbers.push(item.value);
  }
  return [numbers[0] ?? 0n, numbers[1] ?? 0n];
}
