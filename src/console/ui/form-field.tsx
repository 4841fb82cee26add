import type { ComponentChildren } from "preact";
import { ApiError } from "../api.ts";

/** A refusal of an administration endpoint: the field at fault and the rule it breaks (problem+json). */
export interface FieldError {
  field: string;
  message: string;
}

/** The field a 400 names, so the form shows the message beside that input; else undefined. */
export function fieldErrorOf(error: unknown): FieldError | undefined {
  if (!(error instanceof ApiError) || error.status !== 400) return undefined;
  const field = typeof error.problem.field === "string" ? error.problem.field : "";
  if (field === "") return undefined;
  return { field, message: error.problem.detail ?? error.problem.title };
}

/**
 * A labelled input with its hint and, when the API refused it, the message naming the rule, tied to the
 * input (aria-describedby, aria-invalid) so a screen reader reads it with the field.
 */
export function FormField(props: {
  id: string;
  label: string;
  hint?: string;
  error?: string | undefined;
  children: (described: {
    id: string;
    "aria-describedby"?: string;
    "aria-invalid"?: "true";
  }) => ComponentChildren;
}) {
  const hintId = `${props.id}-hint`;
  const errorId = `${props.id}-error`;
  const describedBy = [props.hint ? hintId : "", props.error ? errorId : ""].filter(Boolean).join(" ");
  return (
    <div class="form-field">
      <label for={props.id}>{props.label}</label>
      {props.children({
        id: props.id,
        ...(describedBy ? { "aria-describedby": describedBy } : {}),
        ...(props.error ? { "aria-invalid": "true" as const } : {}),
      })}
      {props.hint && (
        <span class="hint" id={hintId}>
          {props.hint}
        </span>
      )}
      {props.error && (
        <span class="field-error" id={errorId}>
          {props.error}
        </span>
      )}
    </div>
  );
}

/** "a, b ,c" → ["a", "b", "c"]; empty entries dropped. */
export const listOf = (text: string): string[] =>
  text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter((s) => s !== "");

/** A FormField holding one text input bound to `value`: `onValue` gets every edit. */
export function TextField(props: {
  id: string;
  label: string;
  hint?: string;
  error?: string | undefined;
  value: string;
  onValue: (value: string) => void;
  type?: "text" | "url" | "password";
  autocomplete?: string;
}) {
  const { value, onValue, type, autocomplete, ...field } = props;
  return (
    <FormField {...field}>
      {(a) => (
        <input
          {...a}
          {...(type ? { type } : {})}
          {...(autocomplete ? { autocomplete } : {})}
          value={value}
          onInput={(e) => onValue((e.target as HTMLInputElement).value)}
        />
      )}
    </FormField>
  );
}
