/**
 * Jazzer.js 4.0.0 ships its libFuzzer addon prebuilt only (no C++ sources in the npm package; 2.x's
 * sources build libFuzzer from a GitHub download, unreachable here), and the Linux prebuild wants
 * glibc 2.38 (`__isoc23_strtol`, `__isoc23_strtoul`) and GCC 13's libstdc++ (`std::ios_base_library_init`):
 * Debian 12 has glibc 2.36 and GCC 12. Where the addon does not load for that reason, this makes it load:
 * a copy of the addon whose two version requirements (GLIBC_2.38, GLIBCXX_3.4.32) are marked weak
 * (VER_FLG_WEAK: the dynamic loader no longer refuses the file), and a small preloaded library
 * (glibc-shim.cc, built with the machine's g++) that defines the three symbols. Everything else of the
 * addon binds to the machine's libraries as usual. Where the stock addon loads, nothing is done.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const require = createRequire(import.meta.url);

/** Environment for the fuzzing processes (empty when the stock addon loads). */
export interface JazzerEnvironment {
  LD_PRELOAD?: string;
  IMAGING_FUZZ_ADDON?: string;
}

const WEAKENED_VERSIONS = new Set(["GLIBC_2.38", "GLIBCXX_3.4.32"]);
const VER_FLG_WEAK = 0x2;
const SHT_GNU_VERNEED = 0x6ffffffe;

/** Marks the named version requirements of an ELF64 little-endian shared object weak; returns their names. */
export function weakenVersionNeeds(elf: Buffer, names: ReadonlySet<string>): string[] {
  if (elf.readUInt32BE(0) !== 0x7f454c46 || elf[4] !== 2 || elf[5] !== 1)
    throw new Error("not an ELF64 LE file");
  const sectionsAt = Number(elf.readBigUInt64LE(0x28));
  const entrySize = elf.readUInt16LE(0x3a);
  const count = elf.readUInt16LE(0x3c);
  const section = (i: number) => {
    const at = sectionsAt + i * entrySize;
    return {
      type: elf.readUInt32LE(at + 4),
      offset: Number(elf.readBigUInt64LE(at + 0x18)),
      link: elf.readUInt32LE(at + 0x28),
      info: elf.readUInt32LE(at + 0x2c),
    };
  };
  const sections = Array.from({ length: count }, (_, i) => section(i));
  const verneed = sections.find((s) => s.type === SHT_GNU_VERNEED);
  const strings = verneed && sections[verneed.link];
  if (!verneed || !strings) throw new Error("no version-needs section");
  const stringAt = (offset: number) => {
    const start = strings.offset + offset;
    return elf.toString("latin1", start, elf.indexOf(0, start));
  };
  const weakened: string[] = [];
  let need = verneed.offset;
  for (let n = 0; n < verneed.info; n++) {
    let aux = need + elf.readUInt32LE(need + 8);
    for (let k = elf.readUInt16LE(need + 2); k > 0; k--) {
      const name = stringAt(elf.readUInt32LE(aux + 8));
      if (names.has(name)) {
        elf.writeUInt16LE(elf.readUInt16LE(aux + 4) | VER_FLG_WEAK, aux + 4);
        weakened.push(name);
      }
      aux += elf.readUInt32LE(aux + 12);
    }
    need += elf.readUInt32LE(need + 12);
  }
  return weakened;
}

function loadError(env: NodeJS.ProcessEnv): string | undefined {
  const probe = spawnSync(
    process.execPath,
    ["--import", join(here, "preload.ts"), "-e", "require('@jazzer.js/fuzzer')"],
    { cwd: root, env, encoding: "utf8" },
  );
  return probe.status === 0 ? undefined : probe.stderr;
}

function writeAtomically(path: string, bytes: Buffer): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, path);
}

/** What the fuzzing processes need in their environment for Jazzer.js's addon to load here. */
export function prepareJazzer(): JazzerEnvironment {
  const stockError = loadError(process.env);
  if (stockError === undefined) return {};
  if (!/GLIBC_2\.38|GLIBCXX_3\.4\.32/.test(stockError)) {
    throw new Error(`Jazzer.js's native addon does not load:\n${stockError}`);
  }
  const addonPath = join(
    dirname(require.resolve("@jazzer.js/fuzzer/package.json")),
    "prebuilds",
    `fuzzer-${process.platform}-${process.arch}.node`,
  );
  const stock = readFileSync(addonPath);
  const key = createHash("sha256")
    .update(stock)
    .update(readFileSync(join(here, "glibc-shim.cc")))
    .digest("hex");
  const cache = join(root, "node_modules", ".cache", "imaging-fuzz", key.slice(0, 16));
  mkdirSync(cache, { recursive: true });
  const addon = join(cache, "fuzzer.node");
  const shim = join(cache, "glibc-shim.so");
  if (!existsSync(addon)) {
    const patched = Buffer.from(stock);
    const weakened = weakenVersionNeeds(patched, WEAKENED_VERSIONS);
    if (weakened.length === 0)
      throw new Error(`${addonPath}: no GLIBC_2.38 or GLIBCXX_3.4.32 requirement found`);
    writeAtomically(addon, patched);
  }
  if (!existsSync(shim)) {
    const temporary = `${shim}.${process.pid}.tmp`;
    const build = spawnSync(
      "g++",
      ["-shared", "-fPIC", "-O2", "-o", temporary, join(here, "glibc-shim.cc")],
      { encoding: "utf8" },
    );
    if (build.error || build.status !== 0) {
      throw new Error(
        `building the glibc shim for Jazzer.js needs g++ (Debian: apt-get install g++): ${build.error?.message ?? build.stderr}`,
      );
    }
    renameSync(temporary, shim);
  }
  const env: JazzerEnvironment = { LD_PRELOAD: shim, IMAGING_FUZZ_ADDON: addon };
  const compatError = loadError({ ...process.env, ...env });
  if (compatError !== undefined)
    throw new Error(`Jazzer.js's addon does not load even with the shim:\n${compatError}`);
  return env;
}
