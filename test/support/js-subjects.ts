/**
 * Real npm applications for the JavaScript extractor, fetched from the registry once into the scan
 * subjects' cache outside the repository (see scan-subjects.ts): json-server 0.17.4, an Express server
 * that also calls lodash, locked by npm. firebase-tools 8.4.0 comes from scan-subjects.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cached } from "./scan-subjects.ts";

const ENV = {
  ...process.env,
  npm_config_ignore_scripts: "true",
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
};

function npm(cwd: string, args: string[]): void {
  execFileSync("npm", args, { cwd, env: ENV, stdio: ["ignore", "ignore", "pipe"], timeout: 600_000 });
}

/**
 * A published application as extracted from its tarball, without its devDependencies and scripts,
 * with a package-lock.json written by npm (`--package-lock-only`: nothing installed, nothing run).
 */
export function publishedApplication(
  spec: string,
  adjust: (manifest: Record<string, unknown>) => void = () => {},
): string {
  const name = spec.replace(/[@/]/g, (c) => (c === "@" ? "-" : "_")).replace(/^-/, "");
  const dir = cached(name, (work) => {
    const published = join(work, "published");
    mkdirSync(published, { recursive: true });
    npm(work, ["pack", spec, "--silent"]);
    const tarball = execFileSync("sh", ["-c", "ls *.tgz"], { cwd: work, encoding: "utf8" }).trim();
    execFileSync("tar", ["xzf", tarball, "-C", published, "--strip-components=1"], { cwd: work });
    const manifestFile = join(published, "package.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as Record<string, unknown>;
    delete manifest.devDependencies;
    delete manifest.scripts;
    adjust(manifest);
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    npm(published, ["install", "--package-lock-only"]);
  });
  return join(dir, "published");
}

/** json-server 0.17.4: an Express server (express, lodash, lowdb, method-override...), plain CommonJS. */
export function jsonServer(): string {
  return publishedApplication("json-server@0.17.4");
}

/**
 * npm workspaces whose two packages need different lodash versions (4.17.15 and 4.17.21), locked by npm
 * itself: one copy is hoisted to node_modules/lodash, the other nested under its workspace.
 */
export function twoLodashMonorepo(): string {
  return cached("two-lodash-monorepo", (work) => {
    const write = (file: string, json: unknown) => {
      mkdirSync(join(work, file, ".."), { recursive: true });
      writeFileSync(join(work, file), `${JSON.stringify(json, null, 2)}\n`);
    };
    write("package.json", { name: "two-lodash", private: true, workspaces: ["packages/*"] });
    write("packages/api/package.json", {
      name: "@two/api",
      version: "1.0.0",
      dependencies: { lodash: "4.17.15" },
    });
    write("packages/web/package.json", {
      name: "@two/web",
      version: "1.0.0",
      dependencies: { lodash: "4.17.21", express: "4.21.2" },
    });
    npm(work, ["install", "--package-lock-only"]);
  });
}

/** typeorm 0.3.20 as published: about 1,000 JavaScript files (CommonJS and browser ES modules), locked by npm. */
export function typeorm(): string {
  return publishedApplication("typeorm@0.3.20");
}
