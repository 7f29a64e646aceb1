/**
 * Sources and destinations active on the collector, from the working tree.
 * Activating or deactivating is a pending change like any other edit: it
 * reaches the collector after a commit and a publish (the Changes page).
 */
import { useEffect, useState, type FormEvent } from "react";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Link } from "../router.tsx";
import type { Component, DestinationActivationItem, SourceActivationItem } from "./types.ts";

type Kind = "source" | "destination";

const PLURAL = { source: "sources", destination: "destinations" } as const;
const TITLE = { source: "Sources", destination: "Destinations" } as const;

interface Activation {
  id: string;
  configOverrides: Record<string, unknown>;
  tags?: Record<string, string>;
}

function toActivation(item: SourceActivationItem | DestinationActivationItem): Activation {
  return "sourceId" in item
    ? { id: item.sourceId, configOverrides: item.configOverrides }
    : { id: item.destinationId, configOverrides: item.configOverrides, tags: item.tags };
}

export function ActivationsSection({ collectorId, canWrite, reload }: { collectorId: string; canWrite: boolean; reload: number }) {
  return (
    <section className="detail-block" aria-labelledby="activations-title">
      <h2 id="activations-title">Activations</h2>
      <p className="muted">
        Changes here are pending until committed and published on the <Link href="/ui/changes">Changes</Link> page.
      </p>
      <div className="activation-grid">
        <ActivationList kind="source" collectorId={collectorId} canWrite={canWrite} reload={reload} />
        <ActivationList kind="destination" collectorId={collectorId} canWrite={canWrite} reload={reload} />
      </div>
    </section>
  );
}

function ActivationList({ kind, collectorId, canWrite, reload }: { kind: Kind; collectorId: string; canWrite: boolean; reload: number }) {
  const base = `/collectors/${encodeURIComponent(collectorId)}/${PLURAL[kind]}`;
  const [active, setActive] = useState<Activation[] | null>(null);
  const [records, setRecords] = useState<Component[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [overridesError, setOverridesError] = useState("");
  const [busy, setBusy] = useState(false);
  const [changed, setChanged] = useState(0);
  const titleId = `${kind}-activations-title`;

  useEffect(() => {
    let current = true;
    Promise.all([
      api.get<{ items: (SourceActivationItem | DestinationActivationItem)[] }>(base),
      api.get<{ items: Component[] }>(`/${PLURAL[kind]}`),
    ]).then(
      ([list, all]) => {
        if (!current) return;
        setActive(list.items.map(toActivation));
        setRecords(all.items);
      },
      (caught: ApiError) => current && setError(caught),
    );
    return () => {
      current = false;
    };
  }, [base, kind, reload, changed]);

  const nameOf = (id: string) => records.find((r) => r.id === id)?.name ?? id;
  const inactive = records.filter((r) => !active?.some((a) => a.id === r.id));

  function activate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const id = String(form.get("id") ?? "");
    const text = String(form.get("overrides") ?? "").trim();
    let configOverrides: Record<string, unknown> = {};
    if (text !== "") {
      try {
        configOverrides = JSON.parse(text);
      } catch (caught) {
        setOverridesError(`Not valid JSON: ${(caught as Error).message}`);
        return;
      }
      if (typeof configOverrides !== "object" || configOverrides === null || Array.isArray(configOverrides)) {
        setOverridesError("Must be a JSON object, e.g. {\"include\": [\"/var/log/app/*.log\"]}.");
        return;
      }
    }
    setOverridesError("");
    setBusy(true);
    setError(null);
    const body = kind === "source" ? { sourceId: id, configOverrides } : { destinationId: id, configOverrides };
    const target = event.currentTarget;
    api
      .post(base, body)
      .then(() => {
        target.reset();
        setChanged((n) => n + 1);
      }, setError)
      .finally(() => setBusy(false));
  }

  function deactivate(activation: Activation) {
    if (!window.confirm(`Deactivate ${kind} ${nameOf(activation.id)} on this collector?`)) return;
    setError(null);
    api.delete(`${base}/${encodeURIComponent(activation.id)}`).then(() => setChanged((n) => n + 1), setError);
  }

  return (
    <section aria-labelledby={titleId} className="activation-list">
      <h3 id={titleId}>{TITLE[kind]}</h3>
      <ErrorMessage error={error} />
      {active === null ? (
        !error && <p className="muted">Loading…</p>
      ) : active.length === 0 ? (
        <p className="muted">No {PLURAL[kind]} active.</p>
      ) : (
        <ul className="plain activation-items" aria-labelledby={titleId}>
          {active.map((a) => (
            <li key={a.id}>
              <span className="name">{nameOf(a.id)}</span>
              {Object.keys(a.configOverrides).length > 0 && (
                <code className="muted overrides">{JSON.stringify(a.configOverrides)}</code>
              )}
              {a.tags && Object.keys(a.tags).length > 0 && (
                <span className="muted">
                  {Object.entries(a.tags)
                    .map(([k, v]) => `${k}=${v}`)
                    .join(", ")}
                </span>
              )}
              {canWrite && (
                <button type="button" className="button" onClick={() => deactivate(a)}>
                  Deactivate {nameOf(a.id)}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && (
        <form className="activation-form" aria-label={`Activate a ${kind}`} onSubmit={activate}>
          <div className="field">
            <label htmlFor={`${kind}-pick`}>{kind === "source" ? "Source" : "Destination"}</label>
            <select id={`${kind}-pick`} name="id" required disabled={inactive.length === 0}>
              {inactive.length === 0 && <option value="">None left to activate</option>}
              {inactive.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name} ({r.type})
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={`${kind}-overrides`}>Config overrides (JSON, optional)</label>
            <textarea
              id={`${kind}-overrides`}
              name="overrides"
              rows={2}
              spellCheck={false}
              placeholder="{}"
              aria-invalid={overridesError !== "" || undefined}
              aria-describedby={overridesError ? `${kind}-overrides-error` : undefined}
            />
            {overridesError && (
              <p id={`${kind}-overrides-error`} className="field-error">
                {overridesError}
              </p>
            )}
          </div>
          <button type="submit" className="button primary" disabled={busy || inactive.length === 0}>
            Activate {kind}
          </button>
        </form>
      )}
    </section>
  );
}
