/**
 * Module hook for fuzzing runs: Jazzer.js instruments ES modules whose format is "module" only, and Node
 * loads our .ts files as "module-typescript". Registered before Jazzer's own hook, this one hands it
 * the type-stripped JavaScript (the same stripping Node does itself, positions kept).
 */
import { type LoadHook, stripTypeScriptTypes } from "node:module";

export const load: LoadHook = async (url, context, nextLoad) => {
  const result = await nextLoad(url, context);
  if (result.format !== "module-typescript" || result.source === undefined) return result;
  const source =
    typeof result.source === "string" ? result.source : Buffer.from(result.source as Uint8Array).toString();
  return { ...result, format: "module", source: stripTypeScriptTypes(source, { mode: "strip" }) };
};
