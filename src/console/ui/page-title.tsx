import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";

/** The page's one h1, also the document title (screen readers announce it on navigation). */
export function PageTitle(props: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} - imaging-services`;
  }, [props.title]);
  return (
    <header class="page-title">
      <h1 tabIndex={-1} id="page-heading">
        {props.title}
      </h1>
      {props.children}
    </header>
  );
}
