/**
 * Sources and destinations active on the collector, from the working tree.
 * Activating or deactivating is a pending change like any other edit: it
 * reaches the collector after a commit and a publish (the Changes page).
 *
 * Overrides are JSON, except a type's sensitive fields (headers): those get
 * the schema form's write-only editors (SecretField), so a secret is never
 * typed into a visible box and a stored one comes back as its read form,
 * which "Edit overrides" sends back unchanged to keep it. Activating again
 * replaces the overrides, which is how an edit is saved.
 */
import { useState, type FormEvent } from "react";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { SchemaForm } from "../components/SchemaForm.tsx";
import { Link } from "../router.tsx";
import { fieldErrors, readableError } from "../schema/errors.ts";
import { isRecord, type ConfigValue, type Schema } from "../schema/schema.ts";
import { sensitiveKeys } from "../schema/secrets.ts";
import { configSummary } from "../schema/summary.ts";
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
        A pipeline whose matchers select this collector brings its sources and destinations without an activation; activate one here to give it this collector's
        overrides, or for a route. Changes here are pending until committed and published on the <Link href="/ui/changes">Changes</Link> page.
      </p>
      <div className="activation-grid">
        <ActivationList kind="source" collectorId={collectorId} canWrite={canWrite} reload={reload} />
        <ActivationList kind="destination" collectorId={collectorId} canWrite={canWrite} reload={reload} />
      </div>
    </section>
  );
}

function ActivationList({ kind, collectorId, canWrite, reload }: { kind: Kind; collectorId: string; canWrite: boolean; reload: number }) {
  const list = `/collectors/{id}/${PLURAL[kind]}` as const;
  const [editing, setEditing] = useState<string | null>(null);
  const [changed, setChanged] = useState(0);
  const titleId = `${kind}-activations-title`;
  const loaded = useLoad(
    () =>
      Promise.all([api.get(list, { params: { id: collectorId } }), api.get(`/${PLURAL[kind]}`), api.get("/catalog")]).then(([list, all, catalog]) => ({
        active: list.items.map(toActivation),
        records: all.items,
        schemas: new Map(catalog[PLURAL[kind]].map((entry) => [entry.type, entry.schema as Schema])),
      })),
    `${collectorId}|${kind}|${reload}|${changed}`,
  );
  const active = loaded.data?.active ?? null;
  const records = loaded.data?.records ?? [];
  const schemas = loaded.data?.schemas ?? new Map<string, Schema>();
  const deactivation = useAction();
  const error = deactivation.error ?? loaded.error;

  const recordOf = (id: string) => records.find((r) => r.id === id);
  const nameOf = (id: string) => recordOf(id)?.name ?? id;
  const schemaOf = (id: string) => schemas.get(recordOf(id)?.type ?? "");
  const inactive = records.filter((r) => !active?.some((a) => a.id === r.id));

  /** Activates (again): the overrides, and a destination's tags, replace what was there. */
  function save(id: string, configOverrides: Record<string, unknown>, tags?: Record<string, string>) {
    const body = kind === "source" ? { sourceId: id, configOverrides } : { destinationId: id, configOverrides, ...(tags ? { tags } : {}) };
    return api.post(list, { params: { id: collectorId }, body }).then(() => {
      setEditing(null);
      setChanged((n) => n + 1);
    });
  }

  function deactivate(activation: Activation) {
    if (!window.confirm(`Deactivate ${kind} ${nameOf(activation.id)} on this collector?`)) return;
    deactivation.run(
      () =>
        kind === "source"
          ? api.delete("/collectors/{id}/sources/{sourceId}", { params: { id: collectorId, sourceId: activation.id } })
          : api.delete("/collectors/{id}/destinations/{destinationId}", { params: { id: collectorId, destinationId: activation.id } }),
      () => setChanged((n) => n + 1),
    );
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
                <code className="muted overrides">{configSummary(a.configOverrides, schemaOf(a.id)).join(" · ")}</code>
              )}
              {a.tags && Object.keys(a.tags).length > 0 && (
                <span className="muted">
                  {Object.entries(a.tags)
                    .map(([k, v]) => `${k}=${v}`)
                    .join(", ")}
                </span>
              )}
              {canWrite && (
                <span className="activation-actions">
                  <button
                    type="button"
                    className="button"
                    aria-label={`Edit overrides of ${nameOf(a.id)}`}
                    aria-expanded={editing === a.id}
                    onClick={() => setEditing(editing === a.id ? null : a.id)}
                  >
                    Edit overrides
                  </button>
                  <button type="button" className="button" onClick={() => deactivate(a)}>
                    Deactivate {nameOf(a.id)}
                  </button>
                </span>
              )}
              {canWrite && editing === a.id && recordOf(a.id) && (
                <OverridesForm
                  kind={kind}
                  idPrefix={`${kind}-edit`}
                  title={`Overrides of ${nameOf(a.id)}`}
                  choices={[recordOf(a.id)!]}
                  initial={a.configOverrides}
                  schemaOf={(type) => schemas.get(type)}
                  submit="Save overrides"
                  onSave={(id, overrides) => save(id, overrides, a.tags)}
                  onCancel={() => setEditing(null)}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && active !== null && (
        <OverridesForm
          key={`activate-${changed}`}
          kind={kind}
          idPrefix={kind}
          title={`Activate a ${kind}`}
          choices={inactive}
          initial={{}}
          schemaOf={(type) => schemas.get(type)}
          submit={`Activate ${kind}`}
          onSave={(id, overrides) => save(id, overrides)}
        />
      )}
    </section>
  );
}

interface OverridesFormProps {
  kind: Kind;
  /** Prefix of the form's DOM ids, unique on the page. */
  idPrefix: string;
  title: string;
  /** The records to pick from (activating); one record is the one being edited, with no picker. */
  choices: Component[];
  initial: Record<string, unknown>;
  schemaOf: (type: string) => Schema | undefined;
  submit: string;
  onSave: (id: string, overrides: Record<string, unknown>) => Promise<unknown>;
  onCancel?: () => void;
}

/** `value` with only `keys`, or without them. */
function pick(value: Record<string, unknown>, keys: string[], keep: boolean): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => keys.includes(key) === keep));
}

/** An override that changes nothing (no headers) is left out rather than sent. */
function meaningful(value: unknown): boolean {
  return value !== undefined && !(isRecord(value) && Object.keys(value).length === 0);
}

function OverridesForm({ kind, idPrefix, title, choices, initial, schemaOf, submit, onSave, onCancel }: OverridesFormProps) {
  const picking = onCancel === undefined;
  const [id, setId] = useState(choices[0]?.id ?? "");
  const record = choices.find((r) => r.id === id) ?? choices[0];
  const schema = record ? schemaOf(record.type) : undefined;
  const secretKeys = schema ? sensitiveKeys(schema) : [];
  const secretSchema: Schema = { type: "object", properties: pick(schema?.properties ?? {}, secretKeys, true) as Record<string, Schema> };
  const rest = pick(initial, secretKeys, false);
  const [text, setText] = useState(() => (Object.keys(rest).length > 0 ? JSON.stringify(rest) : ""));
  const [secrets, setSecrets] = useState<ConfigValue>(() => pick(initial, secretKeys, true));
  const [jsonError, setJsonError] = useState("");
  const { busy, error, run } = useAction();

  function choose(next: string) {
    setId(next);
    // Another type has other sensitive fields.
    setSecrets({});
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!record) return;
    let overrides: unknown = {};
    if (text.trim() !== "") {
      try {
        overrides = JSON.parse(text);
      } catch (caught) {
        setJsonError(`Not valid JSON: ${(caught as Error).message}`);
        return;
      }
      if (!isRecord(overrides)) {
        setJsonError('Must be a JSON object, e.g. {"include": ["/var/log/app/*.log"]}.');
        return;
      }
    }
    const inJson = secretKeys.filter((key) => key in (overrides as Record<string, unknown>));
    if (inJson.length > 0) {
      setJsonError(`Set ${inJson.join(", ")} in the fields below, not in JSON: they keep secret values write-only.`);
      return;
    }
    setJsonError("");
    const chosen = Object.fromEntries(Object.entries(secrets).filter(([, value]) => meaningful(value)));
    run(
      () => onSave(record.id, { ...(overrides as Record<string, unknown>), ...chosen }),
      () => undefined,
    );
  }

  return (
    <form className="activation-form" aria-label={title} onSubmit={onSubmit}>
      <ErrorMessage error={readableError(error)} />
      {picking && (
        <div className="field">
          <label htmlFor={`${idPrefix}-pick`}>{kind === "source" ? "Source" : "Destination"}</label>
          <select
            id={`${idPrefix}-pick`}
            name="id"
            required
            disabled={choices.length === 0}
            value={record?.id ?? ""}
            onChange={(event) => choose(event.target.value)}
          >
            {choices.length === 0 && <option value="">None left to activate</option>}
            {choices.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name} ({r.type})
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="field">
        <label htmlFor={`${idPrefix}-overrides`}>Config overrides (JSON, optional)</label>
        <textarea
          id={`${idPrefix}-overrides`}
          name="overrides"
          rows={2}
          spellCheck={false}
          placeholder="{}"
          value={text}
          onChange={(event) => setText(event.target.value)}
          aria-invalid={jsonError !== "" || undefined}
          aria-describedby={jsonError ? `${idPrefix}-overrides-error` : undefined}
        />
        {jsonError && (
          <p id={`${idPrefix}-overrides-error`} className="field-error">
            {jsonError}
          </p>
        )}
      </div>
      {secretKeys.length > 0 && (
        <div className="activation-secrets">
          <p className="hint">For this collector only, merged over the {kind}'s own.</p>
          <SchemaForm
            key={record?.id}
            schema={secretSchema}
            value={secrets}
            onChange={setSecrets}
            errors={fieldErrors(error, secretSchema, "configOverrides")}
            idPrefix={`${idPrefix}-secrets`}
            root="configOverrides"
          />
        </div>
      )}
      <div className="activation-form-actions">
        <button type="submit" className="button primary" disabled={busy || !record}>
          {submit}
        </button>
        {onCancel && (
          <button type="button" className="button ghost" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
