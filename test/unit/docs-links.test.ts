/**
 * The documentation as a newcomer meets it: a README short enough to read (issue 30: at most 250 lines,
 * the rest in docs/ by audience), and no relative link in README.md or docs/*.md that leads nowhere —
 * neither to a missing file nor to a heading that moved or was renamed.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";

const ROOT = new URL("../..", import.meta.url).pathname;
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join("docs", f)),
];

/** Markdown outside fenced code blocks, with inline code spans blanked (links in code are not links). */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line.replace(/`[^`]*`/g, "``");
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id as string);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = (heading[1] as string)
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .replace(/[`*]/g, "");
    const slug = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every relative link target of a Markdown file: `[text](target)`, images and reference definitions. */
function relativeLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of prose(markdown)) {
    for (const [, target] of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push(target as string);
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s+(\S+)/.exec(line);
    if (definition) targets.push(definition[1] as string);
  }
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

describe("the documentation", () => {
  it("keeps README.md to at most 250 lines", () => {
    const lines = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\n$/, "").split("\n").length;
    assert.ok(lines <= 250, `README.md has ${lines} lines; move the details to docs/ (at most 250)`);
  });

  it("has every relative link of README.md and docs/*.md lead to an existing file and heading", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of DOCS) {
      const markdown = readFileSync(join(ROOT, file), "utf8");
      for (const target of relativeLinks(markdown)) {
        checked++;
        const [path = "", anchor] = target.split("#", 2);
        const resolved = path === "" ? join(ROOT, file) : join(ROOT, dirname(file), decodeURIComponent(path));
        if (!resolved.startsWith(ROOT) || !existsSync(resolved)) {
          broken.push(`${file}: ${target} (no ${relative(ROOT, resolved)})`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith(".md") && statSync(resolved).isFile()) {
          if (!headingAnchors(readFileSync(resolved, "utf8")).has(decodeURIComponent(anchor))) {
            broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(ROOT, resolved)})`);
          }
        }
      }
    }
    assert.deepEqual(broken, []);
    // The README links its audience documents: a check that finds no link at all checked nothing.
    assert.ok(checked >= 20, `only ${checked} relative links found`);
  });

  it("computes GitHub's anchors for the headings the documents link to", () => {
    const anchors = headingAnchors(
      [
        "## Checking a deployment: `imaging doctor`",
        "### Clients that only register: dynamic client registration (opt-in)",
        "## Sign-in: the embedded identity provider",
        "```sh",
        "# not a heading",
        "```",
        "## Sign-in: the embedded identity provider",
      ].join("\n"),
    );
    assert.deepEqual(
      [...anchors],
      [
        "checking-a-deployment-imaging-doctor",
        "clients-that-only-register-dynamic-client-registration-opt-in",
        "sign-in-the-embedded-identity-provider",
        "sign-in-the-embedded-identity-provider-1",
      ],
    );
  });
});
