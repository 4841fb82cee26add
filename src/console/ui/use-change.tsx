import { useState } from "preact/hooks";
import { ErrorBox } from "./error-box.tsx";
import { fieldErrorOf } from "./form-field.tsx";

/** Runs an API change of an administration page, keeping the refusal (shown beside the field it names). */
export function useChange() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  /** The work's answer, or undefined when it was refused (the refusal is kept). */
  const run = async <T,>(work: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await work();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  const fieldError = fieldErrorOf(error);
  return {
    busy,
    error,
    fieldError,
    run,
    /** Whether the work succeeded, for changes whose answer the page does not use. */
    succeeds: async (work: () => Promise<unknown>): Promise<boolean> =>
      (await run(async () => {
        await work();
        return true;
      })) === true,
    errorFor: (field: string) => (fieldError?.field === field ? fieldError.message : undefined),
    clear: () => setError(undefined),
    /** The error box, unless the message is shown beside one of `fields`. */
    otherError: (fields: string[]) =>
      error !== undefined && !(fieldError && fields.includes(fieldError.field)) ? (
        <ErrorBox error={error} />
      ) : null,
  };
}

/** One text input of a change's form: its value, its setter, and the refusal that names its `field`. */
export function useTextInput(change: Pick<Change, "errorFor">, field: string, initial = "") {
  const [value, onValue] = useState(initial);
  return { value, onValue, error: change.errorFor(field) };
}

export type Change = ReturnType<typeof useChange>;
export type TextInput = ReturnType<typeof useTextInput>;
