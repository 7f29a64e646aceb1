/**
 * Webhooks (GET /webhooks, admins only): subscribe a URL to fleet events,
 * list and delete subscriptions, and read each one's delivery log. The
 * secret that signs deliveries is write-only on the server, so the page
 * offers to generate one and shows it once after the hook is made, with
 * Copy. The open log reads itself again every few seconds, so a retry shows
 * up without a reload. Non-admins get the API's 403 as a plain notice.
 */
import { useEffect, useState, type FormEvent } from "react";
import { WEBHOOK_EVENTS, type WebhookEvent } from "../../../shared/webhook-events.ts";
import type { Webhook, WebhookDelivery } from "../../../shared/webhooks.ts";
import { ApiError } from "../api.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { FieldError, fieldProps } from "../components/FieldError.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { ShownOnce } from "../components/ShownOnce.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { useLoad } from "../load.ts";
import { readableError } from "../schema/errors.ts";
import { useSession } from "../session.tsx";
import "./Accounts.css";
import "./Webhooks.css";

/** What each event means, beside its checkbox (README "Webhooks"). */
const EVENT_HELP: Record<WebhookEvent, string> = {
  "rollout.paused": "a staged rollout paused",
  "rollout.completed": "any rollout ended (publish, staged, attributes, rollback)",
  "rollout.failed": "a rollout ended with failed collectors, or was aborted",
  "collector.offline": "a collector stayed offline",
  "collector.stalled": "a connected collector stopped accepting records",
  "collector.drifted": "a collector runs something other than its target",
  "token.expiring": "an unused enrollment token expires soon",
};

/** The delivery states in a collector status's looks: delivered fine, failed retried, abandoned given up. */
const DELIVERY_LOOK: Record<WebhookDelivery["status"], string> = { delivered: "online", failed: "degraded", abandoned: "offline" };

/** How often the open delivery log is read again. */
const LOG_REFRESH_MS = 3000;

/** 32 random bytes as base64url: a secret well past the API's 16-character minimum. */
function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

type Created = Webhook & { secret: string };

function CreateForm({ onCreated }: { onCreated: (hook: Created) => void }) {
  const { busy, error, setError, run } = useAction();
  const [events, setEvents] = useState<Set<WebhookEvent>>(new Set());
  const [secret, setSecret] = useState("");

  function toggle(event: WebhookEvent, on: boolean) {
    setEvents((before) => {
      const next = new Set(before);
      if (on) next.add(event);
      else next.delete(event);
      return next;
    });
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const url = String(new FormData(formElement).get("url")).trim();
    if (events.size === 0) {
      setError(new ApiError(0, "no_events", "Tick at least one event.", [{ path: "events", message: "tick at least one event" }]));
      return;
    }
    // Kept in the order the server lists them, as it stores them.
    const body = { url, events: WEBHOOK_EVENTS.filter((e) => events.has(e)), secret };
    run(
      () => api.post("/webhooks", { body }),
      (hook) => {
        formElement.reset();
        setEvents(new Set());
        setSecret("");
        onCreated({ ...hook, secret: body.secret });
      },
    );
  }

  return (
    <section className="detail-block" aria-labelledby="webhook-create-title">
      <h2 id="webhook-create-title">Add a webhook</h2>
      <form className="account-form" aria-labelledby="webhook-create-title" onSubmit={onSubmit} noValidate>
        <div className="field grow">
          <label htmlFor="webhook-url">URL</label>
          <input
            id="webhook-url"
            name="url"
            type="url"
            required
            maxLength={2000}
            placeholder="https://alerts.example.com/svc"
            autoComplete="off"
            {...fieldProps(error, "url", "webhook-url-error")}
          />
          <FieldError id="webhook-url-error" error={error} field="url" />
          <span className="muted">
            https to a public address; private and loopback targets (and plain http to localhost) only when the server allows them
            (webhooks.allowPrivateTargets).
          </span>
        </div>
        <fieldset className="scope-picker" {...fieldProps(error, "events", "webhook-events-error")}>
          <legend>Events</legend>
          <ul className="event-list">
            {WEBHOOK_EVENTS.map((name) => (
              <li key={name}>
                <label>
                  <input type="checkbox" checked={events.has(name)} onChange={(e) => toggle(name, e.target.checked)} />
                  <code>{name}</code>
                  <span className="muted">{EVENT_HELP[name]}</span>
                </label>
              </li>
            ))}
          </ul>
          <FieldError id="webhook-events-error" error={error} field="events" />
        </fieldset>
        <div className="field grow">
          <label htmlFor="webhook-secret">Signing secret</label>
          <div className="secret-row">
            <input
              id="webhook-secret"
              name="secret"
              required
              minLength={16}
              maxLength={256}
              autoComplete="off"
              spellCheck={false}
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
              {...fieldProps(error, "secret", "webhook-secret-error")}
            />
            <button type="button" className="button" onClick={() => setSecret(generateSecret())}>
              Generate
            </button>
          </div>
          <FieldError id="webhook-secret-error" error={error} field="secret" />
          <span className="muted">16 characters or more. Deliveries carry its HMAC in X-Svc-Signature; the server never shows it again.</span>
        </div>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? "Adding…" : "Add webhook"}
          </button>
        </div>
      </form>
      <ErrorMessage error={readableError(error)} />
    </section>
  );
}

/** The hook's delivery log, newest first, read again every few seconds while shown. */
function DeliveryLog({ hook }: { hook: Webhook }) {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((n) => n + 1), LOG_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const { data: deliveries, error } = useLoad(
    () => api.get("/webhooks/{id}/deliveries", { params: { id: hook.id } }).then((answer) => answer.items),
    `${hook.id} ${tick}`,
  );
  const titleId = `deliveries-${hook.id}`;
  return (
    <section className="detail-block" aria-labelledby={titleId}>
      <h2 id={titleId}>Deliveries to {hook.url}</h2>
      <ErrorMessage error={error} />
      {deliveries === null ? (
        error === null && <p className="muted">Loading…</p>
      ) : deliveries.length === 0 ? (
        <p className="muted">Nothing sent yet. Deliveries appear here as events happen.</p>
      ) : (
        <ListTable
          caption={{ id: `${titleId}-caption`, text: "Delivery log" }}
          className="accounts-list delivery-log"
          columns={["Time", "Event", "Attempt", "Status", "HTTP", "Next retry", "Last error"]}
        >
          {deliveries.map((d) => (
            <tr key={d.id}>
              <td>
                <LastSeen at={d.time} />
              </td>
              <th scope="row">
                <code>{d.event}</code>
              </th>
              <td>{d.attempt}</td>
              <td>
                <StatusBadge status={DELIVERY_LOOK[d.status]} label={d.status} />
              </td>
              <td>{d.httpStatus ?? <span className="muted">—</span>}</td>
              <td>{d.nextAttemptAt === null ? <span className="muted">—</span> : <LastSeen at={d.nextAttemptAt} />}</td>
              <td className="wrap-anywhere">{d.error ?? <span className="muted">—</span>}</td>
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}

export function WebhooksPage() {
  const { state } = useSession();
  const role = state.status === "signedIn" ? state.user.role : "unknown";
  const { data: hooks, setData: setHooks, error: loadError } = useLoad(() => api.get("/webhooks").then((answer) => answer.items), "");
  const { error: actionError, run } = useAction();
  const [created, setCreated] = useState<Created | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [status, setStatus] = useState("");

  function onCreated(hook: Created) {
    const { secret: _secret, ...listed } = hook;
    setCreated(hook);
    setHooks((list) => [...(list ?? []), listed]);
    setStatus(`Webhook to ${hook.url} added; copy its secret below.`);
  }

  function remove(hook: Webhook) {
    if (!window.confirm(`Delete the webhook to ${hook.url}? Its pending deliveries and its log go with it.`)) return;
    run(
      () => api.delete("/webhooks/{id}", { params: { id: hook.id } }),
      () => {
        setHooks((list) => list?.filter((h) => h.id !== hook.id) ?? null);
        if (created?.id === hook.id) setCreated(null);
        if (shown === hook.id) setShown(null);
        setStatus(`The webhook to ${hook.url} was deleted.`);
      },
    );
  }

  const forbidden = loadError?.status === 403;
  const open = hooks?.find((h) => h.id === shown) ?? null;
  return (
    <section className="accounts-page webhooks-page" aria-labelledby="webhooks-title">
      <div className="page-head">
        <h1 id="webhooks-title">Webhooks</h1>
      </div>
      {forbidden ? (
        <p className="note" role="status">
          Only admins can see and manage webhooks. Your role is {role}; ask an admin for changes.
        </p>
      ) : (
        <ErrorMessage error={loadError} />
      )}
      {hooks !== null && (
        <>
          <CreateForm onCreated={onCreated} />
          <section className="detail-block" aria-labelledby="webhook-list-title">
            <h2 id="webhook-list-title">All webhooks</h2>
            <p className="muted" aria-live="polite">
              {status || `${hooks.length} webhook${hooks.length === 1 ? "" : "s"}.`}
            </p>
            <ErrorMessage error={actionError} />
            {created && (
              <ShownOnce id="webhook-secret-once" label={`Signing secret for ${created.url}`} value={created.secret}>
                Give this secret to the receiver to verify X-Svc-Signature. The server keeps it sealed and does not show it again.
              </ShownOnce>
            )}
            <ListTable caption={{ id: "webhooks-caption", text: "Webhooks" }} className="accounts-list" columns={["URL", "Events", "Created"]} actions>
              {hooks.map((hook) => (
                <tr key={hook.id}>
                  <th scope="row" className="wrap-anywhere">
                    <span className="name">{hook.url}</span>
                  </th>
                  <td>
                    <ul className="hook-events">
                      {hook.events.map((e) => (
                        <li key={e}>
                          <code>{e}</code>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <LastSeen at={hook.createdAt} />
                    <span className="id muted">by {hook.createdBy}</span>
                  </td>
                  <td>
                    <div className="row-actions">
                      <button
                        type="button"
                        className="button"
                        aria-pressed={shown === hook.id}
                        aria-label={`Delivery log of ${hook.url}`}
                        onClick={() => setShown(shown === hook.id ? null : hook.id)}
                      >
                        Delivery log
                      </button>
                      <button type="button" className="button danger" onClick={() => remove(hook)} aria-label={`Delete webhook ${hook.url}`}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </ListTable>
          </section>
          {open && <DeliveryLog key={open.id} hook={open} />}
        </>
      )}
      {hooks === null && loadError === null && <p className="muted">Loading…</p>}
    </section>
  );
}
