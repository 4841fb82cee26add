import { useState } from "preact/hooks";

/**
 * Copies `text` to the clipboard. Over plain http (not a secure context) the Clipboard API is missing:
 * then the text is selected in a hidden field and copied with the legacy command.
 */
export function CopyButton(props: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(props.text);
      else legacyCopy(props.text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 2000);
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy} aria-label={props.label}>
        Copy
      </button>
      <span role="status" aria-live="polite" class="copy-status">
        {state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select the text" : ""}
      </span>
    </span>
  );
}

function legacyCopy(text: string): void {
  const field = document.createElement("textarea");
  field.value = text;
  field.setAttribute("readonly", "");
  field.className = "offscreen";
  document.body.append(field);
  field.select();
  const ok = document.execCommand("copy");
  field.remove();
  if (!ok) throw new Error("copy refused");
}
