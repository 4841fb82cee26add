import { CopyButton } from "./copy-button.tsx";

/** A command or file excerpt to copy as is. */
export function CodeBlock(props: { code: string; label: string }) {
  return (
    <div class="code-block">
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling block must be reachable by keyboard (WCAG 2.1.1) */}
      <pre tabIndex={0}>
        <code>{props.code}</code>
      </pre>
      <CopyButton text={props.code} label={`Copy ${props.label}`} />
    </div>
  );
}
