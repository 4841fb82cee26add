// Jazzer.js loads a fuzz target by a .js/.mjs/.cjs path: this entry hands it the TypeScript target
// named by IMAGING_FUZZ_TARGET (type-stripped and instrumented by the loader hooks of preload.ts).
const target = await import(process.env.IMAGING_FUZZ_TARGET);
export const fuzz = target.fuzz;
