/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`, e.g. the gateway.cpuprofile that
 * BENCH_GATEWAY_CPU_PROF=<dir> npm run bench:gateway writes): where the busy time went, with idle time and
 * module loading (start-up) left out. Usage:
 *
 *   node test/bench/cpuprofile-summary.ts <file.cpuprofile> [top N]
 *
 * Prints the busy seconds, then the share of busy time by self function, by package (or source file),
 * and inclusive (a function and everything it called). The same file opens in Chrome DevTools
 * (Performance panel) or speedscope for a flame graph.
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: node test/bench/cpuprofile-summary.ts <file.cpuprofile> [top N]\n");
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const short = (url: string) =>
  url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/(src|test)\//, "$1/");
const label = (frame: CallFrame) =>
  `${frame.functionName || "(anonymous)"} ${short(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
const packageOf = (url: string) => {
  if (!url) return "(V8, native, GC)";
  const match = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
  if (match?.[1]) return match[1];
  if (url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  return short(url);
};

const timeByNode = new Map<number, number>();
profile.samples.forEach((id, i) => {
  timeByNode.set(id, (timeByNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const stack = (id: number): CallFrame[] => {
  const frames: CallFrame[] = [];
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at);
    if (node) frames.push(node.callFrame);
  }
  return frames;
};
const startUp = (frames: CallFrame[]) =>
  frames.some((f) => /internal\/modules\/(esm|cjs)/.test(f.url) || f.functionName === "evaluate");

let busy = 0;
const self = new Map<string, number>();
const packages = new Map<string, number>();
const inclusive = new Map<string, number>();
const add = (map: Map<string, number>, key: string, t: number) => map.set(key, (map.get(key) ?? 0) + t);
for (const [id, t] of timeByNode) {
  const frames = stack(id);
  const leaf = frames[0];
  if (!leaf || leaf.functionName === "(idle)" || startUp(frames)) continue;
  busy += t;
  add(self, label(leaf), t);
  add(packages, packageOf(leaf.url), t);
  for (const key of new Set(frames.map(label))) add(inclusive, key, t);
}
const table = (map: Map<string, number>) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, t]) => `${((100 * t) / busy).toFixed(1).padStart(6)} %  ${key}`)
    .join("\n");
process.stdout.write(
  `busy ${(busy / 1e6).toFixed(2)} s (idle and module loading left out)\n\n` +
    `== self time by function\n${table(self)}\n\n== self time by package or file\n${table(packages)}\n\n` +
    `== inclusive time\n${table(inclusive)}\n`,
);
