import { useState } from "preact/hooks";
import type { ApiKey, UsersAnswer } from "../../contracts/admin.ts";
import { apiSend } from "../api.ts";
import { CopyButton } from "../ui/copy-button.tsx";
import { FormField, listOf, TextField } from "../ui/form-field.tsx";
import { PageTitle } from "../ui/page-title.tsx";
import { ResourceTable } from "../ui/resource-table.tsx";
import { StatusLine } from "../ui/status-line.tsx";
import { mapLoaded, useApiGet } from "../ui/use-api.ts";
import { type Change, useChange, useTextInput } from "../ui/use-change.tsx";

/** GET /rest/admin/users and /rest/admin/api-keys, as src/contracts/admin.ts declares them. */
type User = UsersAnswer["users"][number];

/** A secret the API answers once: shown with a copy button and the warning that it is not shown again. */
function ShownOnce(props: { label: string; value: string; onDismiss: () => void }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{props.label}</strong>: copy it now, it is not shown again.
      </p>
      <p>
        <code data-testid="shown-once">{props.value}</code>{" "}
        <CopyButton text={props.value} label={`Copy ${props.label}`} />
      </p>
      <button type="button" class="secondary" onClick={props.onDismiss}>
        Done
      </button>
    </div>
  );
}

/** The inputs of a user's or an API key's rights, checked by `change`. */
function useRights(change: Change, role: string, applications: string) {
  return {
    role: useTextInput(change, "role", role),
    applications: useTextInput(change, "applications", applications),
  };
}
type Rights = ReturnType<typeof useRights>;

/** A user's or an API key's rights: the role, and the applications a viewer may read. */
function RightsFields(props: { id: string; rights: Rights; hint: string }) {
  const { role, applications } = props.rights;
  return (
    <>
      <FormField id={`${props.id}-role`} label="Role" error={role.error}>
        {(a) => (
          <select
            {...a}
            value={role.value}
            onChange={(e) => role.onValue((e.target as HTMLSelectElement).value)}
          >
            <option value="viewer">viewer (reads the applications granted)</option>
            <option value="admin">admin (everything)</option>
          </select>
        )}
      </FormField>
      <TextField id={`${props.id}-apps`} label="Applications" hint={props.hint} {...applications} />
    </>
  );
}

function AddUserForm(props: { onAdded: (username: string, password?: string) => void }) {
  const change = useChange();
  const username = useTextInput(change, "username");
  const rights = useRights(change, "viewer", "");
  const password = useTextInput(change, "password");
  const submit = async (event: Event) => {
    event.preventDefault();
    const created = await change.run(() =>
      apiSend<{ username: string; generatedPassword?: string }>("POST", "/admin/users", {
        username: username.value,
        role: rights.role.value,
        applications: listOf(rights.applications.value),
        ...(password.value ? { password: password.value } : {}),
      }),
    );
    if (created) {
      for (const input of [username, rights.applications, password]) input.onValue("");
      props.onAdded(created.username, created.generatedPassword);
    }
  };
  return (
    <form class="admin-card" onSubmit={submit} aria-labelledby="add-user-heading" noValidate>
      <h3 id="add-user-heading">Add a user</h3>
      <TextField
        id="user-name"
        label="User name"
        hint="Letters, digits, '.', '_', '-', '@'"
        autocomplete="off"
        {...username}
      />
      <RightsFields id="user" rights={rights} hint="Comma-separated applications a viewer may read" />
      <TextField
        id="user-password"
        label="Password"
        hint="At least 12 characters; leave empty to generate one (shown once)"
        type="password"
        autocomplete="new-password"
        {...password}
      />
      {change.otherError(["username", "role", "applications", "password"])}
      <button type="submit" disabled={change.busy}>
        {change.busy ? "Adding…" : "Add user"}
      </button>
    </form>
  );
}

function UserActions(props: {
  user: User;
  onChanged: (message: string, password?: string, who?: string) => void;
}) {
  const { user } = props;
  const [granting, setGranting] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const change = useChange();
  const rights = useRights(
    change,
    user.roles.includes("admin") ? "admin" : "viewer",
    user.applications.join(", "),
  );
  const path = `/admin/users/${encodeURIComponent(user.username)}`;
  const id = `user-${user.username.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const grant = async (event: Event) => {
    event.preventDefault();
    const done = await change.run(() =>
      apiSend("PUT", `${path}/rights`, {
        role: rights.role.value,
        applications: listOf(rights.applications.value),
      }),
    );
    if (done) {
      setGranting(false);
      props.onChanged(`${user.username} is now ${rights.role.value}`);
    }
  };
  return (
    <div>
      <div class="actions">
        <button
          type="button"
          class="secondary"
          aria-expanded={granting}
          onClick={() => {
            // The form opens on the user's rights as last loaded (the list reloads after every change).
            if (!granting) {
              rights.role.onValue(user.roles.includes("admin") ? "admin" : "viewer");
              rights.applications.onValue(user.applications.join(", "));
            }
            setGranting(!granting);
          }}
        >
          Rights of {user.username}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={change.busy}
          onClick={async () => {
            const reset = await change.run(() =>
              apiSend<{ generatedPassword?: string }>("POST", `${path}/password`, {}),
            );
            if (reset)
              props.onChanged(`Password of ${user.username} reset`, reset.generatedPassword, user.username);
          }}
        >
          Reset password of {user.username}
        </button>
        {confirming ? (
          <button
            type="button"
            disabled={change.busy}
            onClick={async () => {
              const done = await change.run(async () => {
                await apiSend("DELETE", path);
                return true;
              });
              if (done) props.onChanged(`${user.username} removed`);
            }}
          >
            Confirm: remove {user.username}
          </button>
        ) : (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            Remove {user.username}
          </button>
        )}
      </div>
      {granting && (
        <form onSubmit={grant} aria-label={`Rights of ${user.username}`} noValidate>
          <RightsFields id={id} rights={rights} hint="Comma-separated" />
          <button type="submit" disabled={change.busy}>
            Save rights of {user.username}
          </button>
        </form>
      )}
      {change.otherError(["role", "applications"])}
    </div>
  );
}

function UsersSection() {
  const users = useApiGet<UsersAnswer>("/admin/users");
  const [status, setStatus] = useState("");
  const [secret, setSecret] = useState<{ label: string; value: string }>();
  const changed = (message: string, password?: string, who?: string) => {
    setStatus(message);
    setSecret(password && who ? { label: `Password of ${who}`, value: password } : undefined);
    users.reload();
  };
  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Users</h2>
      <StatusLine text={status} />
      {secret && (
        <ShownOnce label={secret.label} value={secret.value} onDismiss={() => setSecret(undefined)} />
      )}
      {users.data?.readOnly && (
        <p>
          Users are managed in Keycloak (IDP=keycloak): this list is read-only.{" "}
          {users.data.usersConsoleUrl && (
            <a href={users.data.usersConsoleUrl} rel="noopener noreferrer">
              Open Keycloak's admin console (users)
            </a>
          )}
        </p>
      )}
      <ResourceTable
        loaded={mapLoaded(users, (answer) => answer.users)}
        what="users"
        caption="Users who may sign in"
        rowKey={(u) => u.username}
        columns={[
          { header: "User", cell: (u) => u.username },
          { header: "Role", cell: (u) => u.roles.join(", ") || "none" },
          {
            header: "Applications",
            cell: (u) => (u.roles.includes("admin") ? "(all)" : u.applications.join(", ") || "none"),
          },
          { header: "Created", cell: (u) => u.createdAt },
          ...(users.data?.readOnly
            ? []
            : [
                {
                  header: "Actions",
                  // Keyed by name, not by content: a reload after a change must not remount the row's
                  // actions and drop a removal being confirmed (console-admin test, one run in many).
                  cell: (u: User) => <UserActions key={u.username} user={u} onChanged={changed} />,
                },
              ]),
        ]}
      />
      {users.data && !users.data.readOnly && (
        <AddUserForm onAdded={(name, password) => changed(`${name} added`, password, name)} />
      )}
    </section>
  );
}

function ApiKeysSection() {
  const keys = useApiGet<ApiKey[]>("/admin/api-keys");
  const [created, setCreated] = useState<{ id: string; key: string }>();
  const [status, setStatus] = useState("");
  const change = useChange();
  const user = useTextInput(change, "user");
  const rights = useRights(change, "viewer", "");
  const create = async (event: Event) => {
    event.preventDefault();
    const answer = await change.run(() =>
      apiSend<{ id: string; key: string }>("POST", "/admin/api-keys", {
        user: user.value,
        role: rights.role.value,
        applications: listOf(rights.applications.value),
      }),
    );
    if (answer) {
      setCreated({ id: answer.id, key: answer.key });
      setStatus(`API key ${answer.id} created`);
      user.onValue("");
      rights.applications.onValue("");
      keys.reload();
    }
  };
  const revoke = async (id: string) => {
    const done = await change.run(async () => {
      await apiSend("DELETE", `/admin/api-keys/${encodeURIComponent(id)}`);
      return true;
    });
    if (done) setStatus(`API key ${id} revoked`);
    keys.reload();
  };
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <p>Scripts call the REST API with a key as the X-API-KEY header.</p>
      <StatusLine text={status} />
      {created && (
        <ShownOnce
          label={`API key ${created.id}`}
          value={created.key}
          onDismiss={() => setCreated(undefined)}
        />
      )}
      <ResourceTable
        loaded={keys}
        what="API keys"
        caption="API keys"
        rowKey={(k) => k.id}
        empty="No API key yet."
        columns={[
          { header: "Id", cell: (k) => <code>{k.id}</code> },
          { header: "User", cell: (k) => k.user },
          { header: "Role", cell: (k) => k.role },
          {
            header: "Applications",
            cell: (k) => (k.role === "admin" ? "(all)" : k.applications.join(", ") || "none"),
          },
          { header: "Created", cell: (k) => k.createdAt },
          {
            header: "State",
            cell: (k) =>
              k.revokedAt ? (
                `revoked ${k.revokedAt}`
              ) : (
                <button type="button" class="secondary" disabled={change.busy} onClick={() => revoke(k.id)}>
                  Revoke {k.id}
                </button>
              ),
          },
        ]}
      />
      <form class="admin-card" onSubmit={create} aria-labelledby="create-key-heading" noValidate>
        <h3 id="create-key-heading">Create an API key</h3>
        <TextField id="key-user" label="Acts for (user)" {...user} />
        <RightsFields id="key" rights={rights} hint="Comma-separated applications a viewer key may read" />
        {change.otherError(["user", "role", "applications"])}
        <button type="submit" disabled={change.busy}>
          {change.busy ? "Creating…" : "Create API key"}
        </button>
      </form>
    </section>
  );
}

/** Users and API keys (admins): `imaging users` and `imaging api-keys` in the browser. */
export function UsersPage() {
  return (
    <section>
      <PageTitle title="Users and API keys" />
      <UsersSection />
      <ApiKeysSection />
    </section>
  );
}
