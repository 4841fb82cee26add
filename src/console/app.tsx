import { useEffect } from "preact/hooks";
import { LocationProvider, Route, Router, useLocation } from "preact-iso";
import { NotFoundPage } from "./pages/not-found.tsx";
import { routes } from "./routes.ts";
import { type Session, SessionContext, signOut, useSession } from "./session.ts";

function Navigation() {
  const session = useSession();
  const { path } = useLocation();
  const current = path === "/" || path === "/console" ? "/console/status" : path;
  return (
    <nav class="main-nav" aria-label="Console">
      <ul>
        {routes
          .filter((r) => r.nav && (!r.adminOnly || session.isAdmin))
          .map((r) => (
            <li key={r.path}>
              <a
                href={r.path}
                aria-current={current === r.path || current.startsWith(`${r.path}/`) ? "page" : undefined}
              >
                {r.nav}
              </a>
            </li>
          ))}
      </ul>
    </nav>
  );
}

/** Moves focus to the new page's heading after a client-side navigation (screen readers, keyboard). */
function FocusOnNavigate() {
  const { path } = useLocation();
  useEffect(() => {
    document.getElementById("page-heading")?.focus();
  }, [path]);
  return null;
}

function Header() {
  const session = useSession();
  return (
    <header class="top-bar">
      <a class="brand" href="/console/status">
        imaging-services
      </a>
      <span class="who">
        Signed in as <strong>{session.user}</strong> (
        {session.isAdmin ? "admin" : session.roles.join(", ") || "no role"})
      </span>
      <button type="button" class="sign-out" onClick={() => void signOut()}>
        Sign out
      </button>
    </header>
  );
}

export function App(props: { session: Session }) {
  return (
    <SessionContext.Provider value={props.session}>
      <LocationProvider>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <Header />
        <div class="layout">
          <Navigation />
          <main id="main">
            <FocusOnNavigate />
            <Router>
              {[
                ...routes.map((r) => <Route key={r.path} path={r.path} component={r.component} />),
                <Route key="*" default component={NotFoundPage} />,
              ]}
            </Router>
          </main>
        </div>
        <footer class="footer">imaging-services {props.session.version}</footer>
      </LocationProvider>
    </SessionContext.Provider>
  );
}
