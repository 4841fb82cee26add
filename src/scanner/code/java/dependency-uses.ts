/**
 * The part of reading class files that runs in worker threads when the input is large: parse each class
 * file and keep only the uses whose owner class a dependency declares (most uses are the JDK's or the
 * application's own), so little crosses back to the main thread.
 */
import { ClassFormatError, type ClassUses, type MethodUses, readClassUses } from "./class-file.ts";
import { DescriptorError, elementClass, methodTypes } from "./descriptor.ts";

interface ClassDependencyUses {
  label: string;
  /** Internal name the class file declares. */
  name: string;
  /** Supertypes declared by a dependency. */
  supertypes: string[];
  /** Methods with at least one use of a dependency's class or member (owners unwrapped from arrays). */
  methods: MethodUses[];
}

interface UnreadableClassFile {
  label: string;
  message: string;
}

export interface DependencyUsesResult {
  classes: ClassDependencyUses[];
  unreadable: UnreadableClassFile[];
}

export function dependencyUses(
  files: readonly { label: string; bytes: Uint8Array }[],
  dependencyClasses: ReadonlySet<string>,
): DependencyUsesResult {
  const result: DependencyUsesResult = { classes: [], unreadable: [] };
  const external = (owner: string) => {
    const element = elementClass(owner);
    return element !== undefined && dependencyClasses.has(element) ? element : undefined;
  };
  for (const { label, bytes } of files) {
    let parsed: ClassUses;
    const methods: MethodUses[] = [];
    try {
      parsed = readClassUses(bytes);
      for (const method of parsed.methods) {
        const uses = [];
        for (const use of method.uses) {
          const owner = external(use.owner);
          // a method called on an array type (`clone`) belongs to no library
          if (owner === undefined || (use.kind !== "class" && owner !== use.owner)) continue;
          if (use.kind === "method") methodTypes(use.descriptor); // checked here: it becomes the mangling
          uses.push({ ...use, owner });
        }
        if (uses.length > 0) methods.push({ name: method.name, descriptor: method.descriptor, uses });
      }
    } catch (error) {
      if (!(error instanceof ClassFormatError || error instanceof DescriptorError)) throw error;
      result.unreadable.push({ label, message: error.message });
      continue;
    }
    const supertypes = parsed.supertypes.filter((s) => dependencyClasses.has(s));
    result.classes.push({ label, name: parsed.name, supertypes, methods });
  }
  return result;
}
