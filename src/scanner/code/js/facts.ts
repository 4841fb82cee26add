/**
 * What extracting one JavaScript/TypeScript file yields: the uses of imported values it makes and what it
 * exports. Plain data (structured-cloneable) so worker threads can hand it back; linking files together
 * (re-exports through the application's own modules) and naming package versions happen afterwards.
 */

/** A value an import brings: a member path of an npm package, or of one of the application's own modules. */
export type ImportedValue =
  | {
      kind: "package";
      /** npm package name (`lodash`, `@google-cloud/storage`). */
      name: string;
      /** Member path below the package's exports (`["merge"]`; `[]` for the module itself). */
      path: string[];
      /** Reached through an ES-module interop helper: a leading `default` member is the module itself. */
      interop?: boolean;
    }
  | {
      kind: "local";
      /** The specifier as written (`./utils`), resolved against the importing file when linking. */
      specifier: string;
      path: string[];
      interop?: boolean;
    };

/** How the application uses a value: `type` is a TypeScript type position (no call happens). */
export type UseKind = "call" | "new" | "extends" | "read" | "type" | "import";

/** The application's function, method or module a use happens in. */
export interface ApplicationScope {
  /** Qualified name inside the file (`Router.handle`, `outer.inner`); "" for the module's top level. */
  qualifiedName: string;
  /** The last segment of the qualified name. */
  name: string;
  kind: "module" | "function" | "method" | "class";
}

export interface ValueUse {
  from: ApplicationScope;
  value: ImportedValue;
  use: UseKind;
}

export interface ModuleExports {
  /** Named exports that carry an imported value (`export {merge} from "lodash"`, `exports.x = _.x`). */
  named: Record<string, ImportedValue>;
  /** `module.exports = value` / `export = value`: the whole module is that value. */
  whole?: ImportedValue;
  /** Names exported with the module's own values (they hide star re-exports of the same name). */
  own: string[];
  /** `export * from "..."` and compiled equivalents (`__exportStar(require(...), exports)`). */
  stars: ImportedValue[];
}

export interface FileFacts {
  /** Path relative to the scanned root, `/`-separated. */
  file: string;
  lines: number;
  bytes: number;
  uses: ValueUse[];
  exports: ModuleExports;
  /** Set when the file does not parse: it contributes nothing else. */
  error?: { line: number; message: string };
  /** Set when the file is not extracted (minified code). */
  skipped?: "minified";
}
