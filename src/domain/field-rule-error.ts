/** A refused input: the input field at fault, the rule it breaks and a sentence naming the rule. */
export class FieldRuleError<Rule extends string = string> extends Error {
  readonly field: string;
  readonly rule: Rule;
  constructor(field: string, rule: Rule, message: string) {
    super(message);
    this.field = field;
    this.rule = rule;
  }
}
