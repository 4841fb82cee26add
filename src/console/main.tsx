import { render } from "preact";
import { App } from "./app.tsx";
import { loadSession } from "./session.ts";

const root = document.getElementById("app") as HTMLElement;

loadSession().then(
  (session) => {
    if (!session) {
      location.assign(
        `/console/sign-in?return_to=${encodeURIComponent(location.pathname + location.search)}`,
      );
      return;
    }
    root.textContent = "";
    render(<App session={session} />, root);
  },
  (error: unknown) => {
    root.textContent = `The console cannot start: ${(error as Error).message}. Reload the page to try again.`;
  },
);
