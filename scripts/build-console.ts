/**
 * Bundles the web console (src/console) into dist/console: `assets/` with content-hashed names (served
 * with immutable cache headers) and `index.html` naming them (served no-cache). Run by `npm run build`,
 * `prepare` and the test suite's global setup. Prints the size of what the first page loads, and keeps it
 * in `build.json` beside index.html (not served: the gateway serves `assets/` and reads index.html).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src", "console");

export async function buildConsole(
  outDir = join(root, "dist", "console"),
): Promise<{ firstPageJsGzip: number }> {
  rmSync(outDir, { recursive: true, force: true });
  const assets = join(outDir, "assets");
  mkdirSync(assets, { recursive: true });
  const result = await build({
    entryPoints: [join(source, "main.tsx"), join(source, "styles.css")],
    bundle: true,
    splitting: true,
    format: "esm",
    target: "es2022",
    minify: true,
    sourcemap: false,
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: assets,
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    metafile: true,
    absWorkingDir: root,
    legalComments: "none",
    logLevel: "warning",
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = (name: string) => {
    const found = outputs.find(([, o]) => o.entryPoint?.endsWith(`src/console/${name}`));
    if (!found) throw new Error(`esbuild produced no output for ${name}`);
    return found;
  };
  const [js, jsMeta] = entry("main.tsx");
  const [css] = entry("styles.css");
  const html = readFileSync(join(source, "index.html"), "utf8")
    .replace("{{js}}", `/console/assets/${basename(js)}`)
    .replace("{{css}}", `/console/assets/${basename(css)}`);
  writeFileSync(join(outDir, "index.html"), html);
  // The first page loads the entry and the chunks it imports statically.
  const firstPage = [js, ...jsMeta.imports.filter((i) => i.kind === "import-statement").map((i) => i.path)];
  const firstPageJsGzip = firstPage.reduce(
    (sum, file) => sum + gzipSync(readFileSync(join(root, file))).length,
    0,
  );
  writeFileSync(join(outDir, BUILD_REPORT), `${JSON.stringify({ firstPageJsGzip })}\n`);
  return { firstPageJsGzip };
}

const BUILD_REPORT = "build.json";

/** What buildConsole returned when it built `outDir`, read back without building again (if it did). */
export function builtConsole(
  outDir = join(root, "dist", "console"),
): { firstPageJsGzip: number } | undefined {
  const report = join(outDir, BUILD_REPORT);
  return existsSync(report)
    ? (JSON.parse(readFileSync(report, "utf8")) as { firstPageJsGzip: number })
    : undefined;
}

if (import.meta.main) {
  const { firstPageJsGzip } = await buildConsole();
  process.stdout.write(
    `console built: first page JavaScript ${(firstPageJsGzip / 1024).toFixed(1)} KiB gzip\n`,
  );
}
