/**
 * One JavaScript/TypeScript file → the imported values it uses, with scopes (oxc-parser's ESTree AST).
 *
 * One walk declares each scope's names before visiting it (hoisted `var` and functions, block-scoped
 * `let`/`const`/`class`, imports, parameters, catch parameters), resolves every identifier to its
 * binding, and records "sites": member chains (`_.merge`, `require("x").y`, `lodash_1.default.get`),
 * calls, `new`, `extends`, JSX elements and TypeScript type references. Bindings keep the expressions
 * assigned to them; after the walk, sites and exports are evaluated through those (aliases,
 * re-assignments, destructuring, interop helpers), so a local variable that shadows an import is never
 * the package.
 */
import { parseSync, rawTransferSupported, visitorKeys } from "oxc-parser";
import { printable } from "../../../domain/printable-text.ts";
import { type AstNode, isFunction, keyName, memberName, stringOf, unwrap } from "./ast.ts";
import type {
  ApplicationScope,
  FileFacts,
  ImportedValue,
  ModuleExports,
  UseKind,
  ValueUse,
} from "./facts.ts";
import { extend, importedValueOf } from "./imported-value.ts";
import { type Binding, Scope } from "./scope.ts";

const KEYS = visitorKeys as Record<string, readonly string[]>;

/**
 * Nodes whose visitor keys also list parts that declare rather than refer (a label, a type's or type
 * parameter's name, an attribute's name, a predicate's parameter): only these children are visited.
 */
const REFERRING_KEYS: Readonly<Record<string, readonly string[]>> = {
  LabeledStatement: ["body"],
  JSXAttribute: ["value"],
  TSTypeParameter: ["constraint", "default"],
  TSTypePredicate: ["typeAnnotation"],
  TSInterfaceDeclaration: ["typeParameters", "extends", "body"],
  TSTypeAliasDeclaration: ["typeParameters", "typeAnnotation"],
};
const RAW_TRANSFER = rawTransferSupported();

/** Helpers Babel, TypeScript and esbuild emit around `require()`: `.default` of their result is the module. */
const INTEROP_HELPERS = new Set([
  "_interopRequireDefault",
  "_interopRequireWildcard",
  "__importDefault",
  "__importStar",
  "__toESM",
  "__toCommonJS",
  "_interop_require_default",
  "_interop_require_wildcard",
]);
/** Compiled `export * from`: TypeScript's `__exportStar(require(x), exports)` / `__export(require(x))`. */
const EXPORT_STAR_HELPERS = new Set(["__exportStar", "__export", "_exportStar"]);
const FUNCTION_PROTOTYPE = new Set(["call", "apply", "bind"]);

interface Site {
  node: AstNode;
  use: UseKind;
  from: ApplicationScope;
}

/**
 * The module a call of the free `require` names (`require("m")`), `isBound` telling whether this
 * `require` is a binding of the file; undefined for any other call or a non-literal argument.
 */
function requiredSpecifier(node: AstNode, isBound: (require: AstNode) => boolean): string | undefined {
  const callee = unwrap(node.callee);
  if (callee.type !== "Identifier" || callee.name !== "require" || isBound(callee)) return undefined;
  return stringOf(node.arguments[0]);
}

/** The name a call's callee ends in: `f` of `f(…)` and of `x.f(…)`. */
function calleeName(callee: AstNode): string | undefined {
  if (callee.type === "Identifier") return callee.name;
  return callee.type === "MemberExpression" ? memberName(callee) : undefined;
}

function lineAt(source: string, offset: number): number {
  let line = 1;
  for (let i = source.indexOf("\n"); i >= 0 && i < offset; i = source.indexOf("\n", i + 1)) line++;
  return line;
}

function countLines(source: string): number {
  let lines = source.length > 0 ? 1 : 0;
  for (let i = source.indexOf("\n"); i >= 0; i = source.indexOf("\n", i + 1)) lines++;
  return lines;
}

function languageOf(file: string): {
  lang: "js" | "jsx" | "ts" | "tsx";
  sourceType: "module" | "commonjs" | "unambiguous";
} {
  const dot = file.lastIndexOf(".");
  const ext = file.slice(dot + 1);
  const sourceType = ext.startsWith("m") ? "module" : ext.startsWith("c") ? "commonjs" : "unambiguous";
  if (ext === "tsx") return { lang: "tsx", sourceType };
  if (ext === "ts" || ext === "mts" || ext === "cts") return { lang: "ts", sourceType };
  // Plain .js files often hold JSX (React): the JSX grammar is a superset for them.
  return { lang: "jsx", sourceType };
}

/** Extracts the facts of one file; `file` is its path relative to the scanned root (used in names). */
export function extractSource(file: string, source: string): FileFacts {
  const bytes = Buffer.byteLength(source);
  const lines = countLines(source);
  const exports: ModuleExports = { named: {}, own: [], stars: [] };
  const { lang, sourceType } = languageOf(file);
  let program: AstNode;
  try {
    const parse = (as: typeof sourceType) =>
      parseSync(file, source, {
        lang,
        sourceType: as,
        preserveParens: false,
        ...(RAW_TRANSFER ? { experimentalRawTransfer: true } : {}),
      } as Parameters<typeof parseSync>[2]);
    const failed = (result: ReturnType<typeof parseSync>) =>
      result.errors.find((e) => e.severity === "Error");
    let parsed = parse(sourceType);
    // A CommonJS file may `return` at its top level (Node.js wraps it in a function): a script refuses it.
    if (sourceType === "unambiguous" && failed(parsed)) {
      const commonjs = parse("commonjs");
      if (!failed(commonjs)) parsed = commonjs;
    }
    const error = failed(parsed);
    if (error) {
      const at = error.labels[0]?.start ?? 0;
      return {
        file,
        lines,
        bytes,
        uses: [],
        exports,
        // oxc quotes the offending character (a NUL, an escape sequence...) as is
        error: { line: lineAt(source, at), message: printable(error.message) },
      };
    }
    program = parsed.program as unknown as AstNode;
  } catch (error) {
    return {
      file,
      lines,
      bytes,
      uses: [],
      exports,
      error: { line: 1, message: printable((error as Error).message) },
    };
  }
  const walker = new FileWalker(file);
  walker.walkProgram(program);
  return { file, lines, bytes, uses: walker.finish(exports), exports };
}

class FileWalker {
  private readonly resolved = new Map<AstNode, Binding>();
  private readonly sites: Site[] = [];
  private readonly imports: { from: ApplicationScope; value: ImportedValue }[] = [];
  private readonly exportSites: { name: string | null; node: AstNode; star?: boolean }[] = [];
  private readonly exportValues: { name: string; value: ImportedValue }[] = [];
  private readonly ownExports: string[] = [];
  private from: ApplicationScope;
  private readonly moduleScope: ApplicationScope;
  private readonly topScope = new Scope(null, true);

  constructor(file: string) {
    this.moduleScope = { qualifiedName: "", name: file.slice(file.lastIndexOf("/") + 1), kind: "module" };
    this.from = this.moduleScope;
  }

  walkProgram(program: AstNode): void {
    this.collectVars(program.body, this.topScope);
    this.declareBlock(program.body, this.topScope);
    for (const statement of program.body) this.visit(statement, this.topScope);
  }

  // ---- declarations -------------------------------------------------------------------------------

  /** Declares the names of a pattern; `source` is the value it destructures (and the path into it). */
  private declarePattern(pattern: AstNode | null, scope: Scope, source?: { node: AstNode; path: string[] }) {
    if (!pattern) return;
    switch (pattern.type) {
      case "Identifier": {
        const binding = scope.declare(pattern.name);
        if (source) binding.sources.push(source);
        return;
      }
      case "ObjectPattern":
        for (const property of pattern.properties) {
          if (property.type === "RestElement") this.declarePattern(property.argument, scope);
          else {
            const key = keyName(property.key, property.computed);
            this.declarePattern(
              property.value,
              scope,
              source && key !== undefined ? { node: source.node, path: [...source.path, key] } : undefined,
            );
          }
        }
        return;
      case "ArrayPattern":
        for (const element of pattern.elements) this.declarePattern(element, scope);
        return;
      case "AssignmentPattern":
        this.declarePattern(pattern.left, scope, source);
        return;
      case "RestElement":
        this.declarePattern(pattern.argument, scope);
        return;
      case "TSParameterProperty":
        this.declarePattern(pattern.parameter, scope);
        return;
    }
  }

  /** `var` declarations anywhere in a function body (not in nested functions) belong to its scope. */
  private collectVars(statements: readonly AstNode[], scope: Scope): void {
    const visit = (node: AstNode | null | undefined): void => {
      if (!node) return;
      switch (node.type) {
        case "VariableDeclaration":
          if (node.kind === "var")
            for (const d of node.declarations)
              this.declarePattern(d.id, scope, d.init ? { node: d.init, path: [] } : undefined);
          return;
        case "BlockStatement":
        case "StaticBlock":
          for (const s of node.body) visit(s);
          return;
        case "IfStatement":
          visit(node.consequent);
          visit(node.alternate);
          return;
        case "ForStatement":
          visit(node.init);
          visit(node.body);
          return;
        case "ForInStatement":
        case "ForOfStatement":
          visit(node.left);
          visit(node.body);
          return;
        case "WhileStatement":
        case "DoWhileStatement":
        case "LabeledStatement":
        case "WithStatement":
          visit(node.body);
          return;
        case "TryStatement":
          visit(node.block);
          visit(node.handler?.body);
          visit(node.finalizer);
          return;
        case "SwitchStatement":
          for (const c of node.cases) for (const s of c.consequent) visit(s);
          return;
        case "ExportNamedDeclaration":
          visit(node.declaration);
          return;
      }
    };
    for (const statement of statements) visit(statement);
  }

  /** Block-scoped declarations of a statement list (and function declarations, hoisted in their block). */
  private declareBlock(statements: readonly AstNode[], scope: Scope): void {
    for (const raw of statements) {
      let statement = raw;
      if (
        (statement.type === "ExportNamedDeclaration" || statement.type === "ExportDefaultDeclaration") &&
        statement.declaration
      ) {
        statement = statement.declaration;
      }
      switch (statement.type) {
        case "VariableDeclaration":
          if (statement.kind !== "var")
            for (const d of statement.declarations)
              this.declarePattern(d.id, scope, d.init ? { node: d.init, path: [] } : undefined);
          break;
        case "FunctionDeclaration":
        case "ClassDeclaration":
        case "TSEnumDeclaration":
        case "TSInterfaceDeclaration":
        case "TSTypeAliasDeclaration":
          if (statement.id) scope.declare(statement.id.name);
          break;
        case "TSModuleDeclaration":
          if (statement.id?.type === "Identifier") scope.declare(statement.id.name);
          break;
        case "ImportDeclaration":
          this.declareImport(statement, scope);
          break;
        case "TSImportEqualsDeclaration": {
          const binding = scope.declare(statement.id.name);
          const ref = statement.moduleReference;
          if (ref.type === "TSExternalModuleReference") {
            const value = importedValueOf(stringOf(ref.expression) ?? "");
            if (value) binding.imported = value;
          } else binding.sources.push({ node: ref, path: [] });
          break;
        }
      }
    }
  }

  private declareImport(statement: AstNode, scope: Scope): void {
    const module = importedValueOf(stringOf(statement.source) ?? "");
    for (const specifier of statement.specifiers) {
      const binding = scope.declare(specifier.local.name);
      if (!module) continue;
      if (specifier.type === "ImportSpecifier") {
        const imported = keyName(specifier.imported, false) ?? specifier.local.name;
        // A named `default` import is the default export, which for a CommonJS package is the module.
        binding.imported = extend({ ...module, interop: true }, [imported]);
      } else if (specifier.type === "ImportDefaultSpecifier") {
        binding.imported = module.kind === "package" ? module : { ...module, path: ["default"] };
      } else {
        binding.imported = { ...module, interop: true };
      }
    }
  }

  // ---- walking ------------------------------------------------------------------------------------

  private visitChildren(node: AstNode, scope: Scope): void {
    const keys = REFERRING_KEYS[node.type] ?? KEYS[node.type];
    if (!keys) return;
    for (const key of keys) {
      const child = node[key];
      if (!child) continue;
      if (Array.isArray(child)) {
        for (const c of child) if (c) this.visit(c, scope);
      } else if (typeof child.type === "string") this.visit(child, scope);
    }
  }

  private visitAll(nodes: readonly (AstNode | null)[] | null | undefined, scope: Scope): void {
    if (nodes) for (const n of nodes) if (n) this.visit(n, scope);
  }

  private visit(node: AstNode, scope: Scope): void {
    switch (node.type) {
      case "Identifier":
        this.site(node, "read", scope);
        return;
      case "MemberExpression":
        this.site(node, "read", scope);
        return;
      case "CallExpression":
        this.visitCall(node, scope);
        return;
      case "NewExpression":
        this.callee(node.callee, "new", scope);
        this.visitAll(node.typeArguments ? [node.typeArguments] : null, scope);
        this.visitAll(node.arguments, scope);
        return;
      case "TaggedTemplateExpression":
        this.callee(node.tag, "call", scope);
        this.visit(node.quasi, scope);
        return;
      case "ImportExpression": {
        const value = importedValueOf(stringOf(node.source) ?? "");
        if (value) this.imports.push({ from: this.from, value });
        else this.visit(node.source, scope);
        return;
      }
      case "AssignmentExpression":
        this.visitAssignment(node, scope);
        return;
      case "VariableDeclaration":
        for (const d of node.declarations) {
          this.visitPattern(d.id, scope);
          if (d.init) this.visitNamed(d.init, scope, d.id.type === "Identifier" ? d.id.name : undefined);
        }
        return;
      case "FunctionDeclaration":
        this.visitFunction(node, scope, node.id?.name);
        return;
      case "FunctionExpression":
      case "ArrowFunctionExpression":
        this.visitFunction(node, scope, undefined);
        return;
      case "ClassDeclaration":
      case "ClassExpression":
        this.visitClass(node, scope, node.id?.name);
        return;
      case "BlockStatement":
      case "StaticBlock": {
        const inner = new Scope(scope, false);
        this.declareBlock(node.body, inner);
        for (const s of node.body) this.visit(s, inner);
        return;
      }
      case "ForStatement":
      case "ForInStatement":
      case "ForOfStatement": {
        const inner = new Scope(scope, false);
        const head = node.type === "ForStatement" ? node.init : node.left;
        if (head?.type === "VariableDeclaration") this.declareBlock([head], inner);
        this.visitChildren(node, inner);
        return;
      }
      case "SwitchStatement": {
        this.visit(node.discriminant, scope);
        const inner = new Scope(scope, false);
        this.declareBlock(
          node.cases.flatMap((c: AstNode) => c.consequent),
          inner,
        );
        for (const c of node.cases) {
          if (c.test) this.visit(c.test, inner);
          for (const s of c.consequent) this.visit(s, inner);
        }
        return;
      }
      case "CatchClause": {
        const inner = new Scope(scope, false);
        this.declarePattern(node.param, inner);
        if (node.param) this.visitPattern(node.param, inner);
        this.visit(node.body, inner);
        return;
      }
      case "TSModuleDeclaration": {
        if (!node.body) return;
        const inner = new Scope(scope, true);
        const body = node.body.type === "TSModuleBlock" ? node.body.body : [node.body];
        this.collectVars(body, inner);
        this.declareBlock(body, inner);
        for (const s of body) this.visit(s, inner);
        return;
      }
      case "Property":
        if (node.computed) this.visit(node.key, scope);
        this.visitNamed(node.value, scope, keyName(node.key, node.computed), node.kind !== "init");
        return;
      case "ImportDeclaration":
        if (node.importKind !== "type") {
          const value = importedValueOf(stringOf(node.source) ?? "");
          if (value && node.specifiers.some((s: AstNode) => s.importKind !== "type"))
            this.imports.push({ from: this.from, value });
          else if (value && node.specifiers.length === 0) this.imports.push({ from: this.from, value });
        }
        return;
      case "TSImportEqualsDeclaration":
        if (node.moduleReference.type === "TSExternalModuleReference" && node.importKind !== "type") {
          const value = importedValueOf(stringOf(node.moduleReference.expression) ?? "");
          if (value) this.imports.push({ from: this.from, value });
        } else if (node.moduleReference.type !== "TSExternalModuleReference") {
          this.typeSite(node.moduleReference, scope, "read");
        }
        return;
      case "ExportNamedDeclaration":
        this.visitExportNamed(node, scope);
        return;
      case "ExportAllDeclaration": {
        if (node.exportKind === "type") return;
        const value = importedValueOf(stringOf(node.source) ?? "");
        if (!value) return;
        this.imports.push({ from: this.from, value });
        if (node.exported) {
          const name = keyName(node.exported, false);
          if (name !== undefined) this.exportValues.push({ name, value: { ...value, interop: true } });
        } else this.exportSites.push({ name: null, node: node.source, star: true });
        return;
      }
      case "ExportDefaultDeclaration": {
        const declaration = node.declaration;
        if (declaration.type === "Identifier" || declaration.type === "MemberExpression")
          this.exportSites.push({ name: "default", node: declaration });
        else this.ownExports.push("default");
        if (declaration.type === "FunctionDeclaration" || declaration.type === "FunctionExpression")
          this.visitFunction(declaration, scope, declaration.id?.name ?? "default");
        else if (declaration.type === "ClassDeclaration" || declaration.type === "ClassExpression")
          this.visitClass(declaration, scope, declaration.id?.name ?? "default");
        else this.visit(declaration, scope);
        return;
      }
      case "TSExportAssignment":
        this.exportSites.push({ name: null, node: node.expression });
        this.visit(node.expression, scope);
        return;
      case "TSTypeReference":
        this.typeSite(node.typeName, scope, "type");
        if (node.typeArguments) this.visit(node.typeArguments, scope);
        return;
      case "TSTypeQuery":
        if (node.exprName.type !== "TSImportType") this.typeSite(node.exprName, scope, "type");
        else this.visit(node.exprName, scope);
        if (node.typeArguments) this.visit(node.typeArguments, scope);
        return;
      case "TSClassImplements":
      case "TSInterfaceHeritage":
        this.typeSite(node.expression, scope, "type");
        if (node.typeArguments) this.visit(node.typeArguments, scope);
        return;
      case "TSQualifiedName":
        this.typeSite(node, scope, "type");
        return;
      case "JSXOpeningElement":
        this.visitJsxName(node.name, scope);
        this.visitAll(node.attributes, scope);
        if (node.typeArguments) this.visit(node.typeArguments, scope);
        return;
      case "BreakStatement":
      case "ContinueStatement":
      case "MetaProperty":
      case "PrivateIdentifier":
      case "Literal":
      case "TemplateElement":
      case "Super":
      case "ThisExpression":
      case "JSXClosingElement":
      case "JSXIdentifier":
      case "TSEnumMember":
        return;
      // Type-level declarations: their names, keys and parameters declare, they do not refer.
      case "TSPropertySignature":
        if (node.computed) this.visit(node.key, scope);
        if (node.typeAnnotation) this.visit(node.typeAnnotation, scope);
        return;
      case "TSMethodSignature":
      case "TSFunctionType":
      case "TSConstructorType":
      case "TSCallSignatureDeclaration":
      case "TSConstructSignatureDeclaration":
      case "TSDeclareFunction":
      case "TSEmptyBodyFunctionExpression":
        if (node.computed && node.key) this.visit(node.key, scope);
        if (node.typeParameters) this.visit(node.typeParameters, scope);
        for (const param of node.params ?? []) this.visitPattern(param, scope);
        if (node.returnType) this.visit(node.returnType, scope);
        return;
      case "TSIndexSignature":
        for (const param of node.parameters ?? []) this.visitPattern(param, scope);
        if (node.typeAnnotation) this.visit(node.typeAnnotation, scope);
        return;
      case "TSEnumDeclaration":
        for (const member of node.body?.members ?? node.members ?? []) {
          if (member.initializer) this.visit(member.initializer, scope);
        }
        return;
      case "MethodDefinition":
      case "TSAbstractMethodDefinition":
      case "PropertyDefinition":
      case "TSAbstractPropertyDefinition":
      case "AccessorProperty":
        // Handled by visitClass (they need the class's name); reached only for unusual shapes.
        this.visitChildren(node, scope);
        return;
      default:
        this.visitChildren(node, scope);
    }
  }

  private visitJsxName(name: AstNode, scope: Scope): void {
    if (name.type === "JSXIdentifier") {
      // Lower-case names are HTML elements; components start with a capital letter.
      const first = name.name.charCodeAt(0);
      if (first < 65 || first > 90) return;
      const binding = scope.lookup(name.name);
      if (binding) {
        this.resolved.set(name, binding);
        this.sites.push({ node: name, use: "call", from: this.from });
      }
    } else if (name.type === "JSXMemberExpression") {
      let head = name;
      while (head.type === "JSXMemberExpression") head = head.object;
      if (head.type === "JSXIdentifier") {
        const binding = scope.lookup(head.name);
        if (binding) {
          this.resolved.set(head, binding);
          this.sites.push({ node: name, use: "call", from: this.from });
        }
      }
    }
  }

  /** A pattern in a declaration: only defaults, computed keys and type annotations hold references. */
  private visitPattern(pattern: AstNode | null, scope: Scope): void {
    if (!pattern) return;
    switch (pattern.type) {
      case "Identifier":
        if (pattern.typeAnnotation) this.visit(pattern.typeAnnotation, scope);
        return;
      case "ObjectPattern":
        for (const property of pattern.properties) {
          if (property.type === "RestElement") this.visitPattern(property.argument, scope);
          else {
            if (property.computed) this.visit(property.key, scope);
            this.visitPattern(property.value, scope);
          }
        }
        if (pattern.typeAnnotation) this.visit(pattern.typeAnnotation, scope);
        return;
      case "ArrayPattern":
        for (const element of pattern.elements) this.visitPattern(element, scope);
        if (pattern.typeAnnotation) this.visit(pattern.typeAnnotation, scope);
        return;
      case "AssignmentPattern":
        this.visitPattern(pattern.left, scope);
        this.visit(pattern.right, scope);
        return;
      case "RestElement":
        this.visitPattern(pattern.argument, scope);
        if (pattern.typeAnnotation) this.visit(pattern.typeAnnotation, scope);
        return;
      case "TSParameterProperty":
        this.visitAll(pattern.decorators, scope);
        this.visitPattern(pattern.parameter, scope);
        return;
      default:
        // Assignment targets such as `obj.prop` in destructuring assignments.
        this.visit(pattern, scope);
    }
  }

  /** A value that may be a function or class named by its position (`const f = () => ...`). */
  private visitNamed(node: AstNode, scope: Scope, name: string | undefined, method = false): void {
    const value = unwrap(node);
    if (
      name !== undefined &&
      (value.type === "FunctionExpression" || value.type === "ArrowFunctionExpression")
    )
      this.visitFunction(value, scope, name, method ? "method" : "function");
    else if (name !== undefined && value.type === "ClassExpression")
      this.visitClass(value, scope, value.id?.name ?? name);
    else this.visit(node, scope);
  }

  private visitFunction(
    node: AstNode,
    scope: Scope,
    name: string | undefined,
    kind: "function" | "method" = "function",
  ): void {
    const inner = new Scope(scope, true);
    if (node.type === "FunctionExpression" && node.id) inner.declare(node.id.name);
    for (const param of node.params) this.declarePattern(param, inner);
    const outer = this.from;
    if (name !== undefined) {
      const qualifiedName = outer.qualifiedName === "" ? name : `${outer.qualifiedName}.${name}`;
      this.from = { qualifiedName, name, kind };
    }
    this.visitAll(node.decorators, scope);
    if (node.typeParameters) this.visit(node.typeParameters, inner);
    for (const param of node.params) this.visitPattern(param, inner);
    if (node.returnType) this.visit(node.returnType, inner);
    const body = node.body;
    if (body?.type === "BlockStatement") {
      this.collectVars(body.body, inner);
      this.declareBlock(body.body, inner);
      for (const s of body.body) this.visit(s, inner);
    } else if (body) this.visit(body, inner);
    this.from = outer;
  }

  private visitClass(node: AstNode, scope: Scope, name: string | undefined): void {
    const className = name ?? "(class)";
    const outer = this.from;
    const classScope: ApplicationScope = {
      qualifiedName: outer.qualifiedName === "" ? className : `${outer.qualifiedName}.${className}`,
      name: className,
      kind: "class",
    };
    // The class itself refers to what it extends, implements and is decorated with.
    this.from = classScope;
    this.visitAll(node.decorators, scope);
    if (node.superClass) this.callee(node.superClass, "extends", scope);
    if (node.superTypeArguments) this.visit(node.superTypeArguments, scope);
    this.visitAll(node.implements, scope);
    this.from = outer;
    const inner = new Scope(scope, false);
    if (node.type === "ClassExpression" && node.id) inner.declare(node.id.name);
    if (node.typeParameters) this.visit(node.typeParameters, inner);
    for (const member of node.body.body) {
      this.from = classScope;
      this.visitAll(member.decorators, inner);
      this.from = outer;
      if (member.computed && member.key) this.visit(member.key, inner);
      const memberName = member.key ? (keyName(member.key, member.computed) ?? "(computed)") : "(static)";
      if (member.type === "StaticBlock") {
        this.from = {
          qualifiedName: `${classScope.qualifiedName}.(static)`,
          name: "(static)",
          kind: "method",
        };
        this.visit(member, inner);
        this.from = outer;
        continue;
      }
      if (member.typeAnnotation) this.visit(member.typeAnnotation, inner);
      const value = member.value;
      if (!value) continue;
      this.from = classScope;
      if (isFunction(value)) {
        this.visitFunction(value, inner, memberName, "method");
      } else {
        // A field initializer runs in the constructor.
        this.from = {
          qualifiedName: `${classScope.qualifiedName}.${memberName}`,
          name: memberName,
          kind: "method",
        };
        this.visitNamed(value, inner, undefined);
      }
      this.from = outer;
    }
  }

  private visitCall(node: AstNode, scope: Scope): void {
    const specifier = requiredSpecifier(node, () => scope.lookup("require") !== undefined);
    if (specifier !== undefined) {
      const value = importedValueOf(specifier);
      if (value) this.imports.push({ from: this.from, value });
      return;
    }
    // `__exportStar(require(x), exports)`, or `tslib_1.__exportStar(...)` with importHelpers.
    const helper = calleeName(unwrap(node.callee));
    if (helper !== undefined && EXPORT_STAR_HELPERS.has(helper) && node.arguments[0]) {
      this.exportSites.push({ name: null, node: node.arguments[0], star: true });
    }
    this.compiledReExport(node, scope);
    if (node.typeArguments) this.visit(node.typeArguments, scope);
    this.callee(node.callee, "call", scope);
    this.visitAll(node.arguments, scope);
  }

  /**
   * TypeScript's compiled `export { x } from "m"`:
   * `Object.defineProperty(exports, "x", { enumerable: true, get: function () { return m_1.x; } })`.
   */
  private compiledReExport(node: AstNode, scope: Scope): void {
    const callee = unwrap(node.callee);
    if (callee.type !== "MemberExpression" || memberName(callee) !== "defineProperty") return;
    const [target, key, descriptor] = node.arguments as (AstNode | undefined)[];
    const name = stringOf(key);
    if (!target || name === undefined || descriptor?.type !== "ObjectExpression") return;
    if (!(target.type === "Identifier" && target.name === "exports" && !scope.lookup("exports"))) return;
    for (const property of descriptor.properties) {
      if (property.type !== "Property" || keyName(property.key, property.computed) !== "get") continue;
      const body = property.value?.body;
      const returned =
        body?.type === "BlockStatement" && body.body.length === 1 && body.body[0].type === "ReturnStatement"
          ? body.body[0].argument
          : body?.type !== "BlockStatement"
            ? body
            : undefined;
      if (returned) this.exportSites.push({ name, node: returned });
    }
  }

  /** The callee of a call (also `(0, x.y)(...)` as TypeScript compiles imported calls). */
  private callee(node: AstNode, use: UseKind, scope: Scope): void {
    let callee = unwrap(node);
    if (callee.type === "SequenceExpression") {
      const expressions = callee.expressions as AstNode[];
      for (const e of expressions.slice(0, -1)) this.visit(e, scope);
      callee = unwrap(expressions[expressions.length - 1] as AstNode);
    }
    if (callee.type === "Identifier" || callee.type === "MemberExpression") this.site(callee, use, scope);
    else this.visit(callee, scope);
  }

  private visitAssignment(node: AstNode, scope: Scope): void {
    const left = node.left;
    const right = node.right;
    if (left.type === "Identifier") {
      const binding = scope.lookup(left.name);
      if (binding && node.operator === "=") binding.sources.push({ node: right, path: [] });
      else if (binding && (node.operator === "||=" || node.operator === "??=")) {
        binding.sources.push({ node: right, path: [] });
      }
      if (binding) this.resolved.set(left, binding);
      this.visitNamed(right, scope, left.name);
      return;
    }
    if (left.type === "MemberExpression") {
      const target = this.exportTarget(left, scope);
      if (target !== undefined && node.operator === "=") {
        this.exportSites.push({ name: target === "" ? null : target, node: right });
        // `module.exports = { a: _.a, b }`: each property is a named export too.
        const object = unwrap(right);
        if (target === "" && object.type === "ObjectExpression") {
          for (const property of object.properties) {
            const key = property.type === "Property" ? keyName(property.key, property.computed) : undefined;
            if (key !== undefined) this.exportSites.push({ name: key, node: property.value });
          }
        }
      }
      // The left side is written, not read: only its computed parts and object are visited.
      let object = left;
      while (object.type === "MemberExpression") {
        if (object.computed) this.visit(object.property, scope);
        object = unwrap(object.object);
      }
      if (object.type !== "Identifier") this.visit(object, scope);
      this.visitNamed(right, scope, target === "" ? "module.exports" : memberName(left));
      return;
    }
    this.visitPattern(left, scope);
    this.visit(right, scope);
  }

  /** `module.exports` → ""; `module.exports.x` / `exports.x` → "x"; anything else → undefined. */
  private exportTarget(left: AstNode, scope: Scope): string | undefined {
    const isModuleExports = (n: AstNode) =>
      n.type === "MemberExpression" &&
      n.object.type === "Identifier" &&
      n.object.name === "module" &&
      !scope.lookup("module") &&
      memberName(n) === "exports";
    const isExports = (n: AstNode) =>
      n.type === "Identifier" && n.name === "exports" && !scope.lookup("exports");
    if (isModuleExports(left)) return "";
    const object = unwrap(left.object);
    if (isModuleExports(object) || isExports(object)) return memberName(left);
    return undefined;
  }

  private visitExportNamed(node: AstNode, scope: Scope): void {
    if (node.exportKind === "type") return;
    if (node.declaration) {
      const declaration = node.declaration;
      this.visit(declaration, scope);
      if (declaration.type === "VariableDeclaration") {
        for (const d of declaration.declarations)
          if (d.id.type === "Identifier") this.exportSites.push({ name: d.id.name, node: d.id });
      } else if (declaration.id?.type === "Identifier") this.ownExports.push(declaration.id.name);
      return;
    }
    const source = node.source ? importedValueOf(stringOf(node.source) ?? "") : undefined;
    if (node.source && source) this.imports.push({ from: this.from, value: source });
    for (const specifier of node.specifiers) {
      if (specifier.exportKind === "type") continue;
      const exported = keyName(specifier.exported, false);
      const local = keyName(specifier.local, false);
      if (exported === undefined || local === undefined) continue;
      if (node.source) {
        if (source)
          this.exportValues.push({ name: exported, value: extend({ ...source, interop: true }, [local]) });
      } else if (specifier.local.type === "Identifier") {
        const binding = scope.lookup(local);
        if (binding) this.resolved.set(specifier.local, binding);
        this.exportSites.push({ name: exported, node: specifier.local });
      }
    }
  }

  /** Resolves the head identifier of a member chain now (scopes are known) and records the site. */
  private site(node: AstNode, use: UseKind, scope: Scope): void {
    let head = node;
    while (head.type === "MemberExpression") {
      if (head.computed) this.visit(head.property, scope);
      head = unwrap(head.object);
    }
    if (head.type === "Identifier") {
      const binding = scope.lookup(head.name);
      if (!binding) return; // a global
      this.resolved.set(head, binding);
      this.sites.push({ node, use, from: this.from });
      return;
    }
    if (
      head.type === "CallExpression" ||
      head.type === "ImportExpression" ||
      head.type === "AwaitExpression"
    ) {
      this.visit(head, scope);
      if (node !== head) this.sites.push({ node, use, from: this.from });
      return;
    }
    this.visit(head, scope);
  }

  /** A type position: `express.Request`, `Foo` (TSQualifiedName chains). */
  private typeSite(node: AstNode, scope: Scope, use: UseKind): void {
    let head = node;
    while (head.type === "TSQualifiedName" || head.type === "MemberExpression")
      head = head.type === "TSQualifiedName" ? head.left : head.object;
    if (head.type !== "Identifier") {
      this.visit(head, scope);
      return;
    }
    const binding = scope.lookup(head.name);
    if (!binding) return;
    this.resolved.set(head, binding);
    this.sites.push({ node, use, from: this.from });
  }

  // ---- evaluation ---------------------------------------------------------------------------------

  private bindingValue(binding: Binding): ImportedValue | undefined {
    if (binding.imported) return binding.imported;
    if (binding.value !== undefined) return binding.value ?? undefined;
    if (binding.computing) return undefined;
    binding.computing = true;
    let found: ImportedValue | undefined;
    for (const source of binding.sources) {
      const value = this.evaluate(source.node);
      if (value) {
        found = extend(value, source.path);
        break;
      }
    }
    binding.computing = false;
    binding.value = found ?? null;
    return found;
  }

  /** The imported value an expression denotes, if any (calls' results are not followed). */
  private evaluate(raw: AstNode): ImportedValue | undefined {
    const node = unwrap(raw);
    switch (node.type) {
      case "Identifier":
      case "JSXIdentifier": {
        const binding = this.resolved.get(node);
        return binding && this.bindingValue(binding);
      }
      case "MemberExpression":
      case "JSXMemberExpression":
      case "TSQualifiedName": {
        const object = node.type === "TSQualifiedName" ? node.left : node.object;
        const name =
          node.type === "MemberExpression"
            ? memberName(node)
            : node.type === "TSQualifiedName"
              ? node.right.name
              : node.property.name;
        if (name === undefined) return undefined;
        const value = this.evaluate(object);
        return value && extend(value, [name]);
      }
      case "CallExpression": {
        const specifier = requiredSpecifier(node, (require) => this.resolved.has(require));
        if (specifier !== undefined) return importedValueOf(specifier);
        const helper = calleeName(unwrap(node.callee));
        if (helper !== undefined && INTEROP_HELPERS.has(helper) && node.arguments[0]) {
          const value = this.evaluate(node.arguments[0]);
          return value && { ...value, interop: true };
        }
        return undefined;
      }
      case "ImportExpression": {
        const value = importedValueOf(stringOf(node.source) ?? "");
        return value && { ...value, interop: true };
      }
      case "AwaitExpression": {
        const argument = unwrap(node.argument);
        return argument.type === "ImportExpression" ? this.evaluate(argument) : undefined;
      }
      case "SequenceExpression":
        return this.evaluate(node.expressions[node.expressions.length - 1]);
      case "LogicalExpression":
        return node.operator === "&&" ? undefined : (this.evaluate(node.left) ?? this.evaluate(node.right));
      default:
        return undefined;
    }
  }

  finish(exports: ModuleExports): ValueUse[] {
    const uses: ValueUse[] = [];
    for (const { from, value } of this.imports)
      uses.push({ from, value: { ...value, path: [] }, use: "import" });
    for (const site of this.sites) {
      let value = this.evaluate(site.node);
      if (!value) continue;
      let use = site.use;
      // `_.merge.call(...)`, `fn.apply(...)`: a call of the member itself.
      if (value.path.length >= 2 && FUNCTION_PROTOTYPE.has(value.path[value.path.length - 1] as string)) {
        value = { ...value, path: value.path.slice(0, -1) };
        if (use === "read") use = "call";
      }
      // Reading the whole module (passing it along, aliasing it) is not a use of one of its members.
      if (value.path.length === 0 && use === "read") continue;
      const { interop: _, ...plain } = value;
      uses.push({ from: site.from, value: plain, use });
    }
    for (const { name, node, star } of this.exportSites) {
      const value = star ? this.evaluateStar(node) : this.evaluate(node);
      if (!value) {
        if (name !== null && !star) exports.own.push(name);
        continue;
      }
      if (star) exports.stars.push(value);
      else if (name === null) exports.whole = value;
      else exports.named[name] = value;
    }
    for (const { name, value } of this.exportValues) exports.named[name] = value;
    exports.own.push(...this.ownExports);
    return uses;
  }

  private evaluateStar(node: AstNode): ImportedValue | undefined {
    if (node.type === "Literal") return importedValueOf(stringOf(node) ?? "");
    return this.evaluate(node);
  }
}
