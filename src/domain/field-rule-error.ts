/** A refusal naming the rule that made it, with a sentence naming the rule. */
export class RuleError<Rule extends string = string> extends Error {
  readonly rule: Rule;
  constructor(rule: Rule, message: string) {
    super(message);
    this.rule = rule;
  }
}

/** A refused input: the input field at fault, the rule it breaks and a sentence naming the rule. */
export class FieldRuleError<Rule extends string = string> extends RuleError<Rule> {
  readonly field: string;
  constructor(field: string, rule: Rule, message: string) {
    super(rule, message);
    this.field = field;
  }
}
