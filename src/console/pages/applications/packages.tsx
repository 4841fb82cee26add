import { useState } from "preact/hooks";
import { DEVELOPMENT_SCOPES, SCOPE_FILTERS } from "../../../contracts/platform.ts";
import type { Interaction, PackageUse } from "../../../contracts/resources.ts";

import { PageTitle } from "../../ui/page-title.tsx";
import { useApiGet } from "../../ui/use-api.ts";
import { dateOfDay, useAppPage } from "./page-state.ts";
import { appPath } from "./paths.ts";
import {
  AppNav,
  AsOfPicker,
  formatDateTime,
  PagedTable,
  ScopeBadge,
  SeverityBadge,
  Show,
} from "./widgets.tsx";

const LIMIT = 50;

/**
 * The scope filter's choices: every scope, or the versions a production install keeps (all but npm dev and
 * Maven test, unknown kept: as the quality gates count them by default).
 */
const PRODUCTION = SCOPE_FILTERS.filter((s) => !(DEVELOPMENT_SCOPES as readonly string[]).includes(s));
const SCOPE_CHOICES: { value: string; label: string; scopes: readonly string[] }[] = [
  { value: "", label: "All scopes", scopes: [] },
  { value: "production", label: "Production (no dev or test)", scopes: PRODUCTION },
  { value: "development", label: "Development only (dev, test)", scopes: DEVELOPMENT_SCOPES },
  ...SCOPE_FILTERS.map((s) => ({ value: `only-${s}`, label: s, scopes: [s] })),
];

/** The packages an application uses: search by name, vulnerable only, one scope, "as of" a day. */
export function ApplicationPackages() {
  const { name, query, setQuery, skip, onSkip } = useAppPage();
  const [text, setText] = useState(query.q ?? "");
  const scopeChoice = SCOPE_CHOICES.find((c) => c.value === query.scope) ?? SCOPE_CHOICES[0];
  const loaded = useApiGet<PackageUse[]>(`/applications/${encodeURIComponent(name)}/packages`, {
    limit: LIMIT,
    skip,
    q: query.q || undefined,
    vulnerable: query.vulnerable === "true" ? "true" : undefined,
    scope: scopeChoice && scopeChoice.scopes.length > 0 ? scopeChoice.scopes.join(",") : undefined,
    date: dateOfDay(query.date),
  });
  return (
    <section aria-labelledby="page-heading">
      <PageTitle title={`Packages of ${name}`} />
      <AppNav name={name} current="packages" />
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ q: text.trim() || undefined, skip: undefined });
        }}
      >
        <div class="field">
          <label for="pkg-q">Name contains</label>
          <input id="pkg-q" type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} />
          <button type="submit">Search</button>
        </div>
        <label class="check">
          <input
            type="checkbox"
            checked={query.vulnerable === "true"}
            onChange={(e) =>
              setQuery({ vulnerable: e.currentTarget.checked ? "true" : undefined, skip: undefined })
            }
          />
          Vulnerable only
        </label>
        <div class="field">
          <label for="pkg-scope">Scope</label>
          <select
            id="pkg-scope"
            value={scopeChoice?.value ?? ""}
            onChange={(e) => setQuery({ scope: e.currentTarget.value || undefined, skip: undefined })}
          >
            {SCOPE_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </div>
        <AsOfPicker value={query.date} onChange={(date) => setQuery({ date, skip: undefined })} />
      </form>
      <PagedTable
        loaded={loaded}
        what="the packages"
        empty="No package matches."
        caption="Packages in use, by name"
        headers={["Package", "Ecosystem", "Version", "Scope", "Worst severity", "CVEs", "Safest version"]}
        row={(p) => (
          <tr key={`${p.ecosystem}:${p.name}@${p.version}`}>
            <th scope="row">
              <a href={`${appPath(name, "packages", p.name)}?ecosystem=${p.ecosystem}`}>{p.name}</a>
            </th>
            <td>{p.ecosystem}</td>
            <td>{p.version}</td>
            <td>
              <ScopeBadge scope={p.scope} />
            </td>
            <td>
              <SeverityBadge severity={p.maxSeverity} />
            </td>
            <td>{p.vulnerabilities.length === 0 ? "none" : p.vulnerabilities.join(", ")}</td>
            <td>{p.safestVersion ?? "none"}</td>
          </tr>
        )}
        pager={{ skip, limit: LIMIT, label: "packages", onSkip }}
      />
    </section>
  );
}

const INTERACTION_LIMIT = 50;

/** One package of an application: its facts and CVEs, and the application objects using it. */
export function PackageDetail() {
  const { params, name, query, setQuery, skip, onSkip } = useAppPage();
  const pkg = params.package ?? "";
  const ecosystem = query.ecosystem === "npm" || query.ecosystem === "maven" ? query.ecosystem : undefined;
  const date = dateOfDay(query.date);
  const app = `/applications/${encodeURIComponent(name)}`;
  // The packages operation filters by a name part: the exact name (and ecosystem) is picked from its answer.
  const versions = useApiGet<PackageUse[]>(`${app}/packages`, { limit: 1000, q: pkg, date });
  // Without an ecosystem, the references are asked for once the name is known to be in one ecosystem only
  // (the API refuses an ambiguous name; the page offers a link per ecosystem instead).
  const ecosystemsUsed = new Set(versions.data?.filter((p) => p.name === pkg).map((p) => p.ecosystem));
  const ambiguous = !ecosystem && ecosystemsUsed.size > 1;
  const interactions = useApiGet<Interaction[]>(
    ecosystem || (versions.data && !ambiguous) ? `${app}/interactions` : undefined,
    { package: pkg, ecosystem, limit: INTERACTION_LIMIT, skip, date },
  );
  return (
    <section aria-labelledby="page-heading">
      <PageTitle title={`${pkg} in ${name}`} />
      <AppNav name={name} current="packages" />
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <AsOfPicker value={query.date} onChange={(d) => setQuery({ date: d, skip: undefined })} />
      </form>
      <h2>Versions in use</h2>
      <Show loaded={versions} what="the package">
        {(all) => {
          const mine = all.filter((p) => p.name === pkg && (!ecosystem || p.ecosystem === ecosystem));
          if (mine.length === 0) return <p>This analysis does not use {pkg}.</p>;
          const ecosystems = [...new Set(mine.map((p) => p.ecosystem))];
          return (
            <>
              {ecosystems.length > 1 ? (
                <p>
                  {pkg} is used in several ecosystems: see the references of{" "}
                  {ecosystems.map((e, i) => (
                    <span key={e}>
                      {i > 0 ? " or " : ""}
                      <a href={`${appPath(name, "packages", pkg)}?ecosystem=${e}`}>the {e} package</a>
                    </span>
                  ))}
                  .
                </p>
              ) : null}
              {mine.map((p) => (
                <dl class="pairs" key={`${p.ecosystem}@${p.version}`}>
                  <div>
                    <dt>Ecosystem</dt>
                    <dd>{p.ecosystem}</dd>
                  </div>
                  <div>
                    <dt>Version</dt>
                    <dd>{p.version}</dd>
                  </div>
                  <div>
                    <dt>Scope</dt>
                    <dd>
                      <ScopeBadge scope={p.scope} />
                    </dd>
                  </div>
                  <div>
                    <dt>Released</dt>
                    <dd>
                      {p.releaseDate ? formatDateTime(p.releaseDate.dateTime).slice(0, 10) : "unknown"}
                      {p.releaseDate?.source ? ` (${p.releaseDate.source})` : ""}
                    </dd>
                  </div>
                  <div>
                    <dt>Releases per year</dt>
                    <dd>{p.releasesPerYear ?? "unknown"}</dd>
                  </div>
                  <div>
                    <dt>Safer closest version</dt>
                    <dd>{p.saferClosestVersion ?? "none"}</dd>
                  </div>
                  <div>
                    <dt>Safest version</dt>
                    <dd>{p.safestVersion ?? "none"}</dd>
                  </div>
                  <div>
                    <dt>Worst severity</dt>
                    <dd>
                      <SeverityBadge severity={p.maxSeverity} />
                    </dd>
                  </div>
                  <div>
                    <dt>CVEs</dt>
                    <dd>
                      {p.vulnerabilities.length === 0 ? (
                        "none"
                      ) : (
                        <ul class="inline">
                          {p.vulnerabilities.map((id) => (
                            <li key={id}>
                              <a href={appPath(name, "cves", id)}>{id}</a>
                            </li>
                          ))}
                        </ul>
                      )}
                    </dd>
                  </div>
                </dl>
              ))}
            </>
          );
        }}
      </Show>
      {ambiguous ? null : <h2>Application objects using it</h2>}
      {ambiguous ? null : (
        <PagedTable
          loaded={interactions}
          what="the references to the package"
          empty="No application object refers to this package."
          caption="References to the package's external objects"
          headers={["External object", "Version", "Type", "Referred to by"]}
          row={(r) => (
            <tr key={`${r.version}:${r.target.id}<-${r.source.id}`}>
              <td>
                <code>{r.target.fullName}</code>
              </td>
              <td>{r.version}</td>
              <td>{r.target.type}</td>
              <td>
                <code>{r.source.fullName}</code>
              </td>
            </tr>
          )}
          pager={{ skip, limit: INTERACTION_LIMIT, label: "references", onSkip }}
        />
      )}
    </section>
  );
}
