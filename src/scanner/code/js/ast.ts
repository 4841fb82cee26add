/** The oxc-parser AST as the JavaScript extractor reads it, and small readers of its nodes. */

// biome-ignore lint/suspicious/noExplicitAny: the ESTree + TS-ESTree union is walked generically by its visitor keys.
export type AstNode = { type: string; start: number; end: number } & Record<string, any>;

export function stringOf(node: AstNode | null | undefined): string | undefined {
  if (!node) return undefined;
  if (node.type === "Literal" && typeof node.value === "string") return node.value;
  if (node.type === "TemplateLiteral" && node.expressions.length === 0) return node.quasis[0]?.value.cooked;
  return undefined;
}

/** The member a MemberExpression names (`a.b`, `a["b"]`); undefined when computed from a variable. */
export function memberName(node: AstNode): string | undefined {
  if (!node.computed) return node.property.type === "Identifier" ? node.property.name : undefined;
  return stringOf(node.property);
}

/** The name of a property key (`foo`, `"foo"`, `[computed]` → undefined). */
export function keyName(node: AstNode, computed: boolean): string | undefined {
  if (!computed && node.type === "Identifier") return node.name;
  if (node.type === "PrivateIdentifier") return `#${node.name}`;
  const text = stringOf(node);
  if (text !== undefined) return text;
  if (node.type === "Literal" && typeof node.value === "number") return String(node.value);
  return undefined;
}

const WRAPPERS = new Set([
  "ParenthesizedExpression",
  "TSAsExpression",
  "TSSatisfiesExpression",
  "TSNonNullExpression",
  "TSTypeAssertion",
  "TSInstantiationExpression",
  "ChainExpression",
]);

export function unwrap(node: AstNode): AstNode {
  let current = node;
  while (WRAPPERS.has(current.type)) current = current.expression;
  return current;
}

export function isFunction(node: AstNode | null | undefined): boolean {
  return (
    !!node &&
    (node.type === "FunctionExpression" ||
      node.type === "ArrowFunctionExpression" ||
      node.type === "FunctionDeclaration")
  );
}
