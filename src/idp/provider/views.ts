/**
 * Server-rendered pages of the identity provider: sign-in, consent, sign-out and errors. Plain HTML
 * with inline styles (no external asset, so the pages work offline and under a strict CSP), labelled
 * fields, visible focus, and errors announced to screen readers (role="alert") and tied to the
 * fields they concern (aria-describedby).
 */

function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(
    /[&<>"'`]/g,
    (c) =>
      ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" })[c] as string,
  );
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#f4f6f8;--card:#fff;--muted:#57606a;--accent:#0a58ca;--danger:#b42318;--border:#c9d1d9}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--card:#161b22;--muted:#9da7b3;--accent:#5b9dff;--danger:#ff7b72;--border:#30363d}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:28rem;margin:3rem auto;padding:2rem;background:var(--card);border:1px solid var(--border);border-radius:8px}
h1{font-size:1.4rem;margin:0 0 1rem}
p{margin:.5rem 0}
.muted{color:var(--muted);font-size:.9rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input[type=text],input[type=password]{width:100%;padding:.6rem;font:inherit;color:inherit;background:transparent;border:1px solid var(--border);border-radius:6px}
button{font:inherit;font-weight:600;padding:.6rem 1.2rem;border-radius:6px;border:1px solid var(--accent);cursor:pointer}
button.primary{background:var(--accent);color:#fff}
button.secondary{background:transparent;color:var(--accent)}
.actions{display:flex;gap:.75rem;margin-top:1.5rem;flex-wrap:wrap}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.error{border:1px solid var(--danger);color:var(--danger);padding:.75rem;border-radius:6px;margin:1rem 0}
ul{padding-left:1.25rem}
code{font-size:.9em;word-break:break-all}
dl{margin:1rem 0}dt{font-weight:600}dd{margin:0 0 .5rem}
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} - imaging-services</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/** Security headers of every page (no inline script anywhere; styles are inline). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  pragma: "no-cache",
};

const errorBlock = (id: string, message: string | undefined) =>
  message ? `<div class="error" id="${id}" role="alert">${escapeHtml(message)}</div>` : "";

interface LoginView {
  action: string;
  csrf: string;
  clientName: string;
  username?: string | undefined;
  error?: string | undefined;
}

export function loginView(view: LoginView): string {
  const describedBy = view.error ? ' aria-describedby="sign-in-error"' : "";
  const invalid = view.error ? ' aria-invalid="true"' : "";
  // Focus goes to the field to fill: the password when the user name is known.
  const focusUser = view.username ? "" : " autofocus";
  const focusPassword = view.username ? " autofocus" : "";
  return page(
    "Sign in",
    `<h1>Sign in to imaging-services</h1>
<p class="muted">${escapeHtml(view.clientName)} asks you to sign in with your platform account.</p>
${errorBlock("sign-in-error", view.error)}
<form method="post" action="${escapeHtml(view.action)}" novalidate>
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<label for="username">User name</label>
<input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(view.username ?? "")}"${describedBy}${invalid}${focusUser}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${describedBy}${invalid}${focusPassword}>
<div class="actions"><button type="submit" id="sign-in" class="primary">Sign in</button></div>
</form>`,
  );
}

interface ConsentView {
  action: string;
  abortAction: string;
  csrf: string;
  username: string;
  client: {
    name: string;
    id: string;
    /** The client identified itself with a client ID metadata document (its URL is its id). */
    metadataDocument: boolean;
    /** Registered dynamically (RFC 7591): unverified. */
    registered: boolean;
    redirectHost: string;
  };
  /** Requested access: scope and what it lets the client do. */
  scopes: { name: string; description: string }[];
  /** MCP servers the token is for. */
  resources: string[];
}

export function consentView(view: ConsentView): string {
  const origin = view.client.metadataDocument
    ? `<dt>Client identity</dt><dd>published at <code>${escapeHtml(view.client.id)}</code></dd>`
    : view.client.registered
      ? `<dt>Client identity</dt><dd id="unverified"><strong>Unverified</strong>: registered by the application itself, its name is not checked (<code>${escapeHtml(view.client.id)}</code>)</dd>`
      : `<dt>Client</dt><dd><code>${escapeHtml(view.client.id)}</code></dd>`;
  return page(
    "Allow access",
    `<h1>Allow ${escapeHtml(view.client.name)} to act for you?</h1>
<p>You are signed in as <strong>${escapeHtml(view.username)}</strong>.</p>
<dl>
<dt>Application</dt><dd>${escapeHtml(view.client.name)}</dd>
${origin}
<dt>After you answer, you go back to</dt><dd><code>${escapeHtml(view.client.redirectHost)}</code></dd>
${view.resources.length > 0 ? `<dt>For</dt><dd>${view.resources.map((r) => `<code>${escapeHtml(r)}</code>`).join("<br>")}</dd>` : ""}
</dl>
${
  view.scopes.length > 0
    ? `<p>It will be able to:</p><ul>${view.scopes
        .map(
          (s) => `<li>${escapeHtml(s.description)} <span class="muted">(${escapeHtml(s.name)})</span></li>`,
        )
        .join("")}</ul>`
    : ""
}
<p class="muted">It acts with your permissions on the platform. Only allow applications you started yourself.</p>
<div class="actions">
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button type="submit" id="approve" class="primary" autofocus>Allow</button>
</form>
<form method="post" action="${escapeHtml(view.abortAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button type="submit" id="deny" class="secondary">Deny</button>
</form>
</div>`,
  );
}

export function errorView(
  title: string,
  message: string,
  details?: Record<string, string | undefined>,
): string {
  const rows = Object.entries(details ?? {}).filter(([, v]) => v !== undefined && v !== "");
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<div class="error" role="alert">${escapeHtml(message)}</div>
${
  rows.length > 0
    ? `<dl>${rows.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd><code>${escapeHtml(v)}</code></dd>`).join("")}</dl>`
    : ""
}
<p class="muted">Return to the application you came from and start again. If the problem persists, give these details to your administrator.</p>`,
  );
}

/** `form` is oidc-provider's hidden logout form (it carries its own CSRF token). */
export function logoutView(form: string, host: string): string {
  return page(
    "Sign out",
    `<h1>Sign out of ${escapeHtml(host)}?</h1>
${form}
<div class="actions">
<button type="submit" form="op.logoutForm" name="logout" value="yes" id="sign-out" class="primary" autofocus>Sign out</button>
<button type="submit" form="op.logoutForm" id="stay" class="secondary">Stay signed in</button>
</div>`,
  );
}

export function loggedOutView(clientName: string | undefined): string {
  return page(
    "Signed out",
    `<h1>You are signed out</h1>
<p>${clientName ? `You signed out of ${escapeHtml(clientName)} and` : "You"} will be asked to sign in again next time.</p>`,
  );
}
