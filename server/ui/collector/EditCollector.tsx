/**
 * A collector's settings on its page: name, environment, tags and management
 * mode (PATCH /collectors/{id}, only what changed; the API's errors beside the
 * field they name, e.g. a mode change refused because a destination cannot
 * run on the other runtime), and Delete after a confirmation. An edit that
 * would change the config the collector runs is a deployment: its plan
 * (POST /collectors/{id}/edit-plan) is shown first, and it is saved only
 * once confirmed.
 */
import { useState, type FormEvent } from "react";
import type { PublishPlan } from "../../../shared/rollouts.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { DeployConfirm } from "./DeployConfirm.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { FieldError, fieldProps } from "../components/FieldError.tsx";
import { navigate } from "../router.tsx";
import { readCollectorForm, tagsText } from "./tags.ts";
import type { Collector } from "../../../shared/collectors.ts";
import { MODE_NAMES } from "../../../shared/vocabulary.ts";

export function EditCollectorSection({ collector, onSaved }: { collector: Collector; onSaved: (c: Collector) => void }) {
  const { busy, error, setError, run } = useAction();
  const [saved, setSaved] = useState(false);
  /** An edit waiting for its plan to be confirmed. */
  const [pending, setPending] = useState<{ body: Partial<Collector>; plan: PublishPlan } | null>(null);

  function save(body: Partial<Collector>) {
    run(
      () => api.patch("/collectors/{id}", { params: { id: collector.id }, body }),
      (updated) => {
        setSaved(true);
        setPending(null);
        onSaved(updated);
      },
    );
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const fields = readCollectorForm(event.currentTarget, setError);
    if (fields === null) return;
    const { text, name, environment, tags } = fields;
    const mode = text("managementMode") as Collector["managementMode"];
    const body: Partial<Collector> = {};
    if (name !== collector.name) body.name = name;
    if (environment !== collector.environment) body.environment = environment;
    if (tagsText(tags) !== tagsText(collector.tags)) body.tags = tags;
    if (mode !== collector.managementMode) body.managementMode = mode;
    setSaved(false);
    if (Object.keys(body).length === 0) {
      setError(null);
      setSaved(true);
      return;
    }
    run(
      () => api.post("/collectors/{id}/edit-plan", { params: { id: collector.id }, body }),
      ({ plan }) => {
        if (plan && plan.changes.length > 0) setPending({ body, plan });
        else save(body);
      },
    );
  }

  function remove() {
    if (!window.confirm(`Delete collector ${collector.name}? Its record and token are removed; if it runs, it can no longer connect.`)) return;
    run(
      () => api.delete("/collectors/{id}", { params: { id: collector.id } }),
      () => navigate("/ui/collectors"),
    );
  }

  return (
    <section className="detail-block" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      {/* Keyed on the stored values, so a live change elsewhere resets the form to them. */}
      <form
        key={`${collector.name}|${collector.environment}|${tagsText(collector.tags)}|${collector.managementMode}`}
        className="filters"
        aria-label="Collector settings"
        onSubmit={onSubmit}
      >
        <div className="field grow">
          <label htmlFor="edit-name">Name</label>
          <input id="edit-name" name="name" required maxLength={200} defaultValue={collector.name} {...fieldProps(error, "name", "edit-name-error")} />
          <FieldError id="edit-name-error" error={error} field="name" />
        </div>
        <div className="field">
          <label htmlFor="edit-environment">Environment</label>
          <input
            id="edit-environment"
            name="environment"
            maxLength={200}
            defaultValue={collector.environment ?? ""}
            placeholder="none"
            {...fieldProps(error, "environment", "edit-environment-error")}
          />
          <FieldError id="edit-environment-error" error={error} field="environment" />
        </div>
        <div className="field grow">
          <label htmlFor="edit-tags">Tags</label>
          <input
            id="edit-tags"
            name="tags"
            defaultValue={tagsText(collector.tags)}
            placeholder="team=payments, region=eu"
            {...fieldProps(error, "tags", "edit-tags-error")}
          />
          <FieldError id="edit-tags-error" error={error} field="tags" />
        </div>
        <div className="field">
          <label htmlFor="edit-mode">Management</label>
          <select id="edit-mode" name="managementMode" defaultValue={collector.managementMode} {...fieldProps(error, "managementMode", "edit-mode-error")}>
            <option value="opamp">{MODE_NAMES.opamp}</option>
            <option value="rcfg-remotecfg">{MODE_NAMES["rcfg-remotecfg"]}</option>
          </select>
          <FieldError id="edit-mode-error" error={error} field="managementMode" />
        </div>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy}>
            Save
          </button>
          <button type="button" className="button danger" disabled={busy} onClick={remove}>
            Delete collector
          </button>
        </div>
      </form>
      {pending && (
        <DeployConfirm
          label="Settings change plan"
          plan={pending.plan}
          stageable={false}
          busy={busy}
          onApply={() => save(pending.body)}
          onCancel={() => setPending(null)}
        />
      )}
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {saved && !error ? "Saved." : ""}
      </p>
    </section>
  );
}
