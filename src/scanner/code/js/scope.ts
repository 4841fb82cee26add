/** Lexical scopes of one file: each name's binding and what is assigned to it. */
import type { AstNode } from "./ast.ts";
import type { ImportedValue } from "./facts.ts";

export interface Binding {
  /** Expressions assigned to the name, each with the member path taken from it (destructuring). */
  sources: { node: AstNode; path: string[] }[];
  imported?: ImportedValue;
  value?: ImportedValue | null;
  computing?: boolean;
}

export class Scope {
  readonly names = new Map<string, Binding>();
  readonly parent: Scope | null;
  readonly isFunction: boolean;
  constructor(parent: Scope | null, isFunction: boolean) {
    this.parent = parent;
    this.isFunction = isFunction;
  }
  declare(name: string): Binding {
    let binding = this.names.get(name);
    if (!binding) {
      binding = { sources: [] };
      this.names.set(name, binding);
    }
    return binding;
  }
  lookup(name: string): Binding | undefined {
    for (let scope: Scope | null = this; scope; scope = scope.parent) {
      const found = scope.names.get(name);
      if (found) return found;
    }
    return undefined;
  }
  functionScope(): Scope {
    let scope: Scope = this;
    while (!scope.isFunction && scope.parent) scope = scope.parent;
    return scope;
  }
}
