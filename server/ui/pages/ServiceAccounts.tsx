/**
 * Service accounts: API credentials for automation (GET /service-accounts,
 * admins only). Create one with a name and the scopes ticked from the
 * server's own list (GET /scopes), so the form never offers a scope the API
 * would refuse; its token is in the create answer only, so the page shows it
 * once with Copy and a warning and keeps it nowhere. Revoke deletes the
 * account and its token at once. Non-admins get the 403 as a plain notice.
 */
import { useState, type FormEvent } from "react";
import type { Scope } from "../../../shared/access.ts";
import type { CreatedServiceAccount, ScopesAnswer, ServiceAccount } from "../../../shared/service-accounts.ts";
import { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { useLoad } from "../load.ts";
import { LastSeen } from "../components/LastSeen.tsx";
import { readableError } from "../schema/errors.ts";
import { useSession } from "../session.tsx";
import { FieldError, fieldProps } from "../components/FieldError.tsx";
import { ShownOnce } from "../components/ShownOnce.tsx";
import { ListTable } from "../components/ListTable.tsx";
import "./Accounts.css";

function CreateForm({ scopes, onCreated }: { scopes: ScopesAnswer; onCreated: (account: CreatedServiceAccount) => void }) {
  const { busy, error, setError, run } = useAction();
  const [chosen, setChosen] = useState<Set<Scope>>(new Set());

  function toggle(scope: Scope, on: boolean) {
    setChosen((before) => {
      const next = new Set(before);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const name = String(new FormData(formElement).get("name")).trim();
    if (chosen.size === 0) {
      setError(new ApiError(0, "no_scopes", "Tick at least one scope.", [{ path: "scopes", message: "tick at least one scope" }]));
      return;
    }
    run(
      () => api.post("/service-accounts", { body: { name, scopes: [...chosen] } }),
      (created) => {
        formElement.reset();
        setChosen(new Set());
        onCreated(created);
      },
    );
  }

  return (
    <section className="detail-block" aria-labelledby="create-title">
      <h2 id="create-title">Create a service account</h2>
      <form className="account-form" aria-labelledby="create-title" onSubmit={onSubmit} noValidate>
        <div className="field">
          <label htmlFor="account-name">Name</label>
          <input
            id="account-name"
            name="name"
            required
            maxLength={100}
            placeholder="ci-deployer"
            autoComplete="off"
            {...fieldProps(error, "name", "account-name-error")}
          />
          <FieldError id="account-name-error" error={error} field="name" />
        </div>
        <fieldset className="scope-picker" {...fieldProps(error, "scopes", "account-scopes-error")}>
          <legend>Scopes</legend>
          <div className="scope-presets">
            <span className="muted">Tick as a role:</span>
            {Object.entries(scopes.roles).map(([role, set]) => (
              <button key={role} type="button" className="button ghost" onClick={() => setChosen(new Set(set))} aria-label={`Tick the ${role} role's scopes`}>
                {role}
              </button>
            ))}
            <button type="button" className="button ghost" onClick={() => setChosen(new Set())} aria-label="Untick every scope">
              none
            </button>
          </div>
          <ul className="scope-list">
            {scopes.items.map((scope) => (
              <li key={scope}>
                <label>
                  <input type="checkbox" checked={chosen.has(scope)} onChange={(event) => toggle(scope, event.target.checked)} />
                  <code>{scope}</code>
                </label>
              </li>
            ))}
          </ul>
          <FieldError id="account-scopes-error" error={error} field="scopes" />
        </fieldset>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? "Creating…" : "Create service account"}
          </button>
        </div>
      </form>
      <ErrorMessage error={readableError(error)} />
    </section>
  );
}

export function ServiceAccountsPage() {
  const { state } = useSession();
  const role = state.status === "signedIn" ? state.user.role : "unknown";
  const loaded = useLoad(
    () =>
      Promise.all([api.get("/service-accounts"), api.get("/scopes")]).then(([list, scopes]) => ({
        accounts: list.items,
        scopes,
      })),
    "",
  );
  const accounts = loaded.data?.accounts ?? null;
  const scopes = loaded.data?.scopes ?? null;
  const loadError = loaded.error;
  /** Shows this page's own create or revoke at once. */
  const setAccounts = (update: (before: ServiceAccount[]) => ServiceAccount[]) =>
    loaded.setData((before) => before && { ...before, accounts: update(before.accounts) });
  const { error: actionError, run } = useAction();
  const [created, setCreated] = useState<CreatedServiceAccount | null>(null);
  const [status, setStatus] = useState("");

  function onCreated(account: CreatedServiceAccount) {
    setCreated(account);
    const { token: _token, ...listed } = account;
    setAccounts((list) => [...list, listed]);
    setStatus(`${account.name} created; copy its token below.`);
  }

  function revoke(account: ServiceAccount) {
    if (!window.confirm(`Revoke service account ${account.name}? Its token stops working at once.`)) return;
    run(
      () => api.delete("/service-accounts/{id}", { params: { id: account.id } }),
      () => {
        setAccounts((list) => list.filter((a) => a.id !== account.id));
        if (created?.id === account.id) setCreated(null);
        setStatus(`${account.name} was revoked.`);
      },
    );
  }

  const forbidden = loadError?.status === 403;
  return (
    <section className="accounts-page" aria-labelledby="accounts-title">
      <div className="page-head">
        <h1 id="accounts-title">Service accounts</h1>
      </div>
      {forbidden ? (
        <p className="note" role="status">
          Only admins can see and manage service accounts. Your role is {role}; ask an admin for an API token.
        </p>
      ) : (
        <ErrorMessage error={loadError} />
      )}
      {accounts !== null && scopes !== null && (
        <>
          <CreateForm scopes={scopes} onCreated={onCreated} />
          <section className="detail-block" aria-labelledby="account-list-title">
            <h2 id="account-list-title">All service accounts</h2>
            <p className="muted" aria-live="polite">
              {status || (accounts.length === 0 ? "No service accounts." : `${accounts.length} service account${accounts.length === 1 ? "" : "s"}.`)}
            </p>
            {created && (
              <ShownOnce id="account-token" label={`Token for ${created.name}`} value={created.token}>
                Copy the token now and keep it in a secret store: it is shown only this once and the server cannot show it again. Lost it? Revoke the account
                and create a new one.
              </ShownOnce>
            )}
            <ErrorMessage error={actionError} />
            {accounts.length > 0 && (
              <ListTable
                caption={{ id: "accounts-caption", text: "Service accounts" }}
                className="accounts-list"
                columns={["Name", "Scopes", "Created"]}
                actions
              >
                {accounts.map((account) => (
                  <tr key={account.id}>
                    <th scope="row">
                      <span className="name">{account.name}</span>
                    </th>
                    <td>
                      <ul className="tags" aria-label={`Scopes of ${account.name}`}>
                        {account.scopes.map((scope) => (
                          <li key={scope} className="tag">
                            {scope}
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>
                      <LastSeen at={account.createdAt} />
                      <span className="id muted">by {account.createdBy}</span>
                    </td>
                    <td>
                      <button type="button" className="button danger" onClick={() => revoke(account)} aria-label={`Revoke ${account.name}`}>
                        Revoke
                      </button>
                    </td>
                  </tr>
                ))}
              </ListTable>
            )}
          </section>
        </>
      )}
      {accounts === null && loadError === null && <p className="muted">Loading…</p>}
    </section>
  );
}
