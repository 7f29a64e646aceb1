/**
 * Add a collector in one flow: name, environment, tags and how it is managed
 * (OpenTelemetry Collector (OpAMP) or Alloy (remote config)), then what to run on its host,
 * the install one-liner or the bootstrap files. POST /collectors makes the
 * record; POST /collectors/snippet?collectorId= or POST
 * /collectors/{id}/bootstrap mints its token (an enrollment token bound to it
 * for OpAMP, its own token for remotecfg) and answers the material, shown
 * once. Should that second call fail, the collector exists: the error says
 * so and "Try again" asks only for the material. The material carries the
 * collector's credential, so it needs collectors:enroll: without it the
 * record is made and the page says who can make the material.
 */
import { useState, type FormEvent } from "react";
import type { BootstrapFile } from "../../../shared/enrollment.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { FieldError, fieldProps } from "../components/FieldError.tsx";
import { BootstrapFileList, SnippetBox, type Snippet } from "../components/InstallMaterial.tsx";
import { SetupWarning, useOnboardingReadiness } from "../components/SetupWarnings.tsx";
import { Link } from "../router.tsx";
import { useHasScope } from "../schema/editing.tsx";
import { readCollectorForm } from "./tags.ts";
import type { Collector } from "../../../shared/collectors.ts";
import { MODE_NAMES } from "../../../shared/vocabulary.ts";

type Mode = Collector["managementMode"];
type Delivery = "snippet" | "files";
type Material = { kind: "snippet"; snippet: Snippet } | { kind: "files"; files: BootstrapFile[] };

const MODES: { value: Mode; label: string; hint: string }[] = [
  { value: "opamp", label: MODE_NAMES.opamp, hint: "runs under the OpAMP supervisor; svc pushes its config" },
  { value: "rcfg-remotecfg", label: MODE_NAMES["rcfg-remotecfg"], hint: "polls svc for its config" },
];

function material(collector: Collector, delivery: Delivery): Promise<Material> {
  return delivery === "snippet"
    ? api.post("/collectors/snippet", { query: { collectorId: collector.id } }).then((snippet) => ({ kind: "snippet", snippet }))
    : api.post("/collectors/{id}/bootstrap", { params: { id: collector.id } }).then(({ files }) => ({ kind: "files", files }));
}

export function AddCollector({ onClose }: { onClose: (added: boolean) => void }) {
  const readiness = useOnboardingReadiness(true);
  const canEnroll = useHasScope("collectors:enroll");
  const blocked = readiness && !readiness.collectorSnippet.ready ? readiness.collectorSnippet.problem : null;
  const [mode, setMode] = useState<Mode>("opamp");
  const [delivery, setDelivery] = useState<Delivery>("snippet");
  const [created, setCreated] = useState<Collector | null>(null);
  const [answer, setAnswer] = useState<Material | null>(null);
  const { busy, error, setError, run } = useAction();

  function fetchMaterial(collector: Collector) {
    run(() => material(collector, delivery), setAnswer);
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const fields = readCollectorForm(event.currentTarget, setError);
    if (fields === null) return;
    const { name, environment, tags } = fields;
    run(
      () => api.post("/collectors", { body: { name, managementMode: mode, tags, ...(environment === null ? {} : { environment }) } }),
      (collector) => {
        setCreated(collector);
        if (canEnroll) fetchMaterial(collector);
      },
    );
  }

  const runtime = MODE_NAMES[mode];
  return (
    <section className="detail-block onboarding-card add-collector" aria-labelledby="add-collector-title">
      <h2 id="add-collector-title">Add a collector</h2>
      {created === null ? (
        <form className="filters bootstrap-form" aria-label="Add a collector" onSubmit={onSubmit}>
          <div className="field grow">
            <label htmlFor="add-name">Name</label>
            <input id="add-name" name="name" required maxLength={200} placeholder="web-1" {...fieldProps(error, "name", "add-name-error")} />
            <FieldError id="add-name-error" error={error} field="name" />
          </div>
          <div className="field">
            <label htmlFor="add-environment">Environment</label>
            <input id="add-environment" name="environment" maxLength={200} placeholder="prod" {...fieldProps(error, "environment", "add-environment-error")} />
            <FieldError id="add-environment-error" error={error} field="environment" />
          </div>
          <div className="field grow">
            <label htmlFor="add-tags">Tags</label>
            <input id="add-tags" name="tags" placeholder="team=payments, region=eu" {...fieldProps(error, "tags", "add-tags-error")} />
            <FieldError id="add-tags-error" error={error} field="tags" />
          </div>
          <fieldset className="choice">
            <legend>Management</legend>
            {MODES.map((choice) => (
              <label key={choice.value}>
                <input type="radio" name="managementMode" value={choice.value} checked={mode === choice.value} onChange={() => setMode(choice.value)} />{" "}
                {choice.label} <span className="muted">({choice.hint})</span>
              </label>
            ))}
            <FieldError id="add-mode-error" error={error} field="managementMode" />
          </fieldset>
          {canEnroll ? (
            <fieldset className="choice">
              <legend>Then show</legend>
              <label>
                <input type="radio" name="delivery" value="snippet" checked={delivery === "snippet"} onChange={() => setDelivery("snippet")} /> The install
                command
              </label>
              <label>
                <input type="radio" name="delivery" value="files" checked={delivery === "files"} onChange={() => setDelivery("files")} /> The bootstrap files
              </label>
            </fieldset>
          ) : (
            <p className="note" role="note">
              Its install command and bootstrap files carry its credential, so an admin makes them (collectors:enroll); this adds the record only.
            </p>
          )}
          <div className="filter-actions">
            <button type="submit" className="button primary" disabled={busy || blocked !== null} aria-describedby={blocked ? "add-blocked" : undefined}>
              Add collector
            </button>
            <button type="button" className="button" onClick={() => onClose(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <p role="status">
          Added <Link href={`/ui/collectors/${encodeURIComponent(created.id)}`}>{created.name}</Link> ({runtime}).{" "}
          {canEnroll ? answer === null && !error && "Minting its token…" : "An admin makes its install command (collectors:enroll)."}
        </p>
      )}
      {blocked && <SetupWarning id="add-blocked" title="Unavailable" problem={blocked} />}
      {created !== null && error && (
        <p className="muted">The collector was added, but its {delivery === "snippet" ? "install command" : "bootstrap files"} could not be made:</p>
      )}
      <ErrorMessage error={error} />
      {created !== null && error && (
        <button type="button" className="button" disabled={busy} onClick={() => fetchMaterial(created)}>
          Try again
        </button>
      )}
      {answer?.kind === "snippet" && <SnippetBox id="add-snippet" label={`Install command for ${created?.name}`} snippet={answer.snippet} />}
      {answer?.kind === "files" && (
        <>
          <p className="hint">
            {answer.files.length} file{answer.files.length === 1 ? "" : "s"} for {runtime}. Shown once: the files hold a new token.
          </p>
          <BootstrapFileList files={answer.files} idPrefix="add-file" />
        </>
      )}
      {created !== null && (
        <div className="filter-actions">
          <button type="button" className="button" onClick={() => onClose(true)}>
            Done
          </button>
        </div>
      )}
    </section>
  );
}
