/**
 * Preloaded (`--import`) into every fuzzing process, before Jazzer.js starts: registers the type-stripping
 * hook (so Jazzer's hook, registered later and so run first, gets JavaScript to instrument) and, when
 * addon-compat.ts prepared one, loads the glibc-compatible copy of Jazzer's native addon.
 */
import Module, { register } from "node:module";

register(new URL("./strip-types-loader.ts", import.meta.url));

const addon = process.env.IMAGING_FUZZ_ADDON;
if (addon) {
  type NodeLoader = (module: unknown, filename: string) => unknown;
  const extensions = (Module as unknown as { _extensions: Record<string, NodeLoader> })._extensions;
  const loadNative = extensions[".node"] as NodeLoader;
  extensions[".node"] = (module, filename) =>
    loadNative(module, /[\\/]@jazzer\.js[\\/]fuzzer[\\/]prebuilds[\\/]/.test(filename) ? addon : filename);
}
