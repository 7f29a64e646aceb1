/**
 * Users of the web UI (GET /users, admins only): invite someone with a role,
 * change roles, disable or enable, delete, and send a password reset. The
 * server either mails a link (SMTP configured) and answers where it went, or
 * answers the link itself for the admin to hand over; the page shows
 * whichever it got, the link once. Everyone else gets the API's 403 as a
 * plain "admins only" notice and no controls.
 */
import { useEffect, useState, type FormEvent } from "react";
import { USER_ROLES, type Role } from "../../../shared/access.ts";
import type { User } from "../../../shared/users.ts";
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
import { StatusBadge } from "../components/StatusBadge.tsx";
import "./Accounts.css";

/** A link the server made for one user: shown once, or where it was mailed. */
interface Delivered {
  kind: "invite" | "reset";
  username: string;
  url?: string;
  mailedTo?: string;
  expiresAt: string;
}

function DeliveredLink({ delivered }: { delivered: Delivered }) {
  const what = delivered.kind === "invite" ? "Invite link" : "Password reset link";
  if (delivered.mailedTo !== undefined) {
    return (
      <p className="note">
        {what} for {delivered.username} mailed to <strong>{delivered.mailedTo}</strong>. It works once and expires <LastSeen at={delivered.expiresAt} />.
      </p>
    );
  }
  return (
    <ShownOnce id={`${delivered.kind}-link`} label={`${what} for ${delivered.username}`} value={delivered.url ?? ""}>
      Hand this link to {delivered.username} yourself: no mail was sent. It works once, expires <LastSeen at={delivered.expiresAt} /> and is not shown again.
    </ShownOnce>
  );
}

function InviteForm({ onInvited }: { onInvited: (user: User, delivered: Delivered) => void }) {
  const { busy, error, run } = useAction();
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const body = { username: String(form.get("username")).trim(), email: String(form.get("email")).trim(), role: form.get("role") };
    run(
      () => api.post("/users", { body }),
      (answer) => {
        formElement.reset();
        onInvited(answer.user, {
          kind: "invite",
          username: answer.user.username,
          url: answer.inviteUrl,
          mailedTo: answer.mailedTo,
          expiresAt: answer.inviteExpiresAt,
        });
      },
    );
  }
  return (
    <section className="detail-block" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a user</h2>
      <form className="filters" aria-labelledby="invite-title" onSubmit={onSubmit} noValidate>
        <div className="field">
          <label htmlFor="invite-username">Username</label>
          <input id="invite-username" name="username" required maxLength={64} autoComplete="off" {...fieldProps(error, "username", "invite-username-error")} />
          <FieldError id="invite-username-error" error={error} field="username" />
        </div>
        <div className="field grow">
          <label htmlFor="invite-email">E-mail</label>
          <input
            id="invite-email"
            name="email"
            type="email"
            required
            maxLength={254}
            autoComplete="off"
            {...fieldProps(error, "email", "invite-email-error")}
          />
          <FieldError id="invite-email-error" error={error} field="email" />
        </div>
        <div className="field">
          <label htmlFor="invite-role">Role</label>
          <select id="invite-role" name="role" defaultValue="viewer">
            {USER_ROLES.map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        </div>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? "Inviting…" : "Invite"}
          </button>
        </div>
      </form>
      <ErrorMessage error={readableError(error)} />
    </section>
  );
}

interface RowActions {
  setRole(user: User, role: Role): void;
  setDisabled(user: User, disabled: boolean): void;
  remove(user: User): void;
  reset(user: User): void;
}

function UserRow({ user, self, busy, actions }: { user: User; self: boolean; busy: boolean; actions: RowActions }) {
  const [role, setRole] = useState<Role>(user.role);
  useEffect(() => setRole(user.role), [user.role]);
  const disabled = user.disabledAt !== null;
  return (
    <tr>
      <th scope="row">
        <span className="name">{user.username}</span>
        {self && <span className="muted"> (you)</span>}
      </th>
      <td className="wrap-anywhere">{user.email || <span className="muted">—</span>}</td>
      <td>
        <div className="row-role">
          <label htmlFor={`role-${user.id}`} className="visually-hidden">
            Role of {user.username}
          </label>
          <select id={`role-${user.id}`} value={role} onChange={(event) => setRole(event.target.value as Role)} disabled={busy}>
            {USER_ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          {role !== user.role && (
            <button type="button" className="button" disabled={busy} onClick={() => actions.setRole(user, role)} aria-label={`Save role for ${user.username}`}>
              Save
            </button>
          )}
        </div>
      </td>
      <td>{disabled ? <StatusBadge status="disabled" symbol="⊘" tone="neutral" /> : <StatusBadge status="enabled" tone="ok" />}</td>
      <td>
        <LastSeen at={user.createdAt} />
        <span className="id muted">by {user.createdBy}</span>
      </td>
      <td>
        <div className="row-actions">
          <button type="button" className="button" disabled={busy} onClick={() => actions.reset(user)} aria-label={`Send password reset to ${user.username}`}>
            Reset password
          </button>
          {!self && (
            <>
              <button
                type="button"
                className="button"
                disabled={busy}
                onClick={() => actions.setDisabled(user, !disabled)}
                aria-label={`${disabled ? "Enable" : "Disable"} ${user.username}`}
              >
                {disabled ? "Enable" : "Disable"}
              </button>
              <button type="button" className="button danger" disabled={busy} onClick={() => actions.remove(user)} aria-label={`Delete ${user.username}`}>
                Delete
              </button>
            </>
          )}
        </div>
      </td>
    </tr>
  );
}

export function UsersPage() {
  const { state } = useSession();
  const me = state.status === "signedIn" ? state.user : null;
  const { data: users, setData: setUsers, error: loadError } = useLoad(() => api.get("/users").then((answer) => answer.items), "");
  const { busy, error: actionError, run } = useAction();
  const [actingOn, setActingOn] = useState<string | null>(null);
  const [status, setStatus] = useState("");
  const [delivered, setDelivered] = useState<Delivered | null>(null);

  /** Runs one row's call; on success replaces (or drops) the row and says what happened. */
  function act<T>(user: User, call: () => Promise<T>, done: (answer: T) => string) {
    setActingOn(user.id);
    setStatus("");
    run(call, (answer) => setStatus(done(answer)));
  }
  const busyId = busy ? actingOn : null;
  const replace = (changed: User) => setUsers((list) => list?.map((u) => (u.id === changed.id ? changed : u)) ?? null);

  const actions: RowActions = {
    setRole: (user, role) =>
      act(
        user,
        () => api.patch("/users/{id}", { params: { id: user.id }, body: { role } }),
        (changed) => {
          replace(changed);
          return `${changed.username} is now ${changed.role}.`;
        },
      ),
    setDisabled: (user, disabled) =>
      act(
        user,
        () => api.patch("/users/{id}", { params: { id: user.id }, body: { disabled } }),
        (changed) => {
          replace(changed);
          return disabled ? `${changed.username} is disabled and signed out.` : `${changed.username} is enabled.`;
        },
      ),
    remove: (user) => {
      if (!window.confirm(`Delete user ${user.username}? They are signed out at once and cannot sign in again.`)) return;
      act(
        user,
        () => api.delete("/users/{id}", { params: { id: user.id } }),
        () => {
          setUsers((list) => list?.filter((u) => u.id !== user.id) ?? null);
          return `${user.username} was deleted.`;
        },
      );
    },
    reset: (user) =>
      act(
        user,
        () => api.post("/users/{id}/password-reset", { params: { id: user.id } }),
        (answer) => {
          setDelivered({ kind: "reset", username: user.username, url: answer.resetUrl, mailedTo: answer.mailedTo, expiresAt: answer.expiresAt });
          return answer.mailedTo ? `Password reset link mailed to ${answer.mailedTo}.` : `Password reset link for ${user.username} made.`;
        },
      ),
  };

  function onInvited(user: User, link: Delivered) {
    setUsers((list) => [...(list ?? []), user]);
    setDelivered(link);
    setStatus(link.mailedTo ? `Invite mailed to ${link.mailedTo}.` : `${user.username} invited; hand over the link below.`);
  }

  const forbidden = loadError?.status === 403;
  return (
    <section className="accounts-page" aria-labelledby="users-title">
      <div className="page-head">
        <h1 id="users-title">Users</h1>
      </div>
      {forbidden ? (
        <p className="note" role="status">
          Only admins can see and manage users. Your role is {me?.role ?? "unknown"}; ask an admin for changes.
        </p>
      ) : (
        <ErrorMessage error={loadError} />
      )}
      {users !== null && (
        <>
          <InviteForm onInvited={onInvited} />
          <section className="detail-block" aria-labelledby="user-list-title">
            <h2 id="user-list-title">All users</h2>
            <p className="muted" aria-live="polite">
              {status || `${users.length} user${users.length === 1 ? "" : "s"}.`}
            </p>
            <ErrorMessage error={actionError} />
            {delivered && <DeliveredLink delivered={delivered} />}
            <ListTable
              caption={{ id: "users-caption", text: "Users" }}
              className="accounts-list"
              columns={["Username", "E-mail", "Role", "State", "Created"]}
              actions
            >
              {users.map((user) => (
                <UserRow key={user.id} user={user} self={user.id === me?.id} busy={busyId === user.id} actions={actions} />
              ))}
            </ListTable>
          </section>
        </>
      )}
      {users === null && loadError === null && <p className="muted">Loading…</p>}
    </section>
  );
}
