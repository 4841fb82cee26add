/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`, e.g. those bench:mcp and bench:gateway write with
 * BENCH_MCP_CPU_PROF / BENCH_GATEWAY_CPU_PROF): the share of samples by file group, by function (self
 * time) and by function including callees.
 *
 *   node test/bench/cpu-profile-summary.ts <file.cpuprofile> [rows]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, rowsArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: node test/bench/cpu-profile-summary.ts <file.cpuprofile> [rows]\n");
  process.exit(2);
}
const rows = Number(rowsArg ?? 40);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const timeOf = new Map<number, number>();
profile.samples.forEach((id, i) => {
  timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...timeOf.values()].reduce((a, b) => a + b, 0);

const shortUrl = (url: string) =>
  url.replace(/^.*node_modules\//, "npm:").replace(/^file:\/\/.*?\/(src|test)\//, "$1/");
const label = (node: ProfileNode) =>
  `${node.callFrame.functionName || "(anonymous)"} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
const group = (node: ProfileNode) => {
  const url = shortUrl(node.callFrame.url);
  if (!url) return node.callFrame.functionName;
  return url.startsWith("npm:")
    ? url
        .split("/")
        .slice(0, url.startsWith("npm:@") ? 2 : 1)
        .join("/")
    : url;
};

const self = new Map<string, number>();
const groups = new Map<string, number>();
const inclusive = new Map<string, number>();
const add = (map: Map<string, number>, key: string, t: number) => map.set(key, (map.get(key) ?? 0) + t);
for (const [id, t] of timeOf) {
  const node = byId.get(id) as ProfileNode;
  add(self, label(node), t);
  add(groups, group(node), t);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const key = label(byId.get(at) as ProfileNode);
    if (!seen.has(key)) {
      seen.add(key);
      add(inclusive, key, t);
    }
  }
}
const top = (map: Map<string, number>) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .map(([key, t]) => `${((100 * t) / total).toFixed(1).padStart(5)} %  ${key}`)
    .join("\n");
process.stdout.write(
  `${(total / 1e6).toFixed(1)} s sampled\n\n== by file (self)\n${top(groups)}\n\n== by function (self)\n${top(self)}\n\n== by function (including callees)\n${top(inclusive)}\n`,
);
