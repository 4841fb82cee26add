/**
 * A .class file of the application or of a dependency jar, read for the members its bytecode uses;
 * dependencyUses is the step the scanner runs (ClassFormatError and DescriptorError are reported there
 * as unreadable class files, never thrown).
 */
import { ClassFormatError, readClassUses } from "../../../src/scanner/code/java/class-file.ts";
import { dependencyUses } from "../../../src/scanner/code/java/dependency-uses.ts";
import { elementClass } from "../../../src/scanner/code/java/descriptor.ts";
import { expectOneLine } from "./kit.ts";

export function fuzz(data: Buffer): void {
  const bytes = new Uint8Array(data);
  // Every class the file uses counts as a dependency's, so that every use is checked.
  const owners = new Set<string>();
  try {
    const uses = readClassUses(bytes);
    for (const s of uses.supertypes) owners.add(s);
    for (const m of uses.methods)
      for (const u of m.uses) {
        const element = elementClass(u.owner);
        if (element !== undefined) owners.add(element);
      }
  } catch (error) {
    if (!(error instanceof ClassFormatError)) throw error;
    expectOneLine(error.message);
  }
  const result = dependencyUses([{ label: "org/example/App.class", bytes }], owners);
  for (const unreadable of result.unreadable) expectOneLine(unreadable.message);
}
