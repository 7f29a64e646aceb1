/**
 * Publishing to one collector, named by what the person types: its name or
 * its id (the field suggests matches, and offers each collector of a shared
 * name as a choice): the quick path for trying a commit on one machine (it
 * also includes a collector a rollback pinned, since the publish names it).
 */
import { useState, type FormEvent } from "react";
import type { Rollout } from "../../../shared/rollouts.ts";
import { api, ApiError } from "../api.ts";
import { CollectorField } from "../components/CollectorField.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { publishedText } from "./PublishPlanner.tsx";

export function PublishOne({ onPublished }: { onPublished: (result: string) => void }) {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);

  function publish(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const collector = String(new FormData(event.currentTarget).get("collector") ?? "").trim();
    if (collector === "") return;
    setBusy(true);
    setError(null);
    // The body's collectorIds, not /publish/{collectorId}: a collector may be named "plan" or "status".
    api
      .post<Rollout>("/publish", { collectorIds: [collector] })
      .then((rollout) => onPublished(publishedText(rollout)), setError)
      .finally(() => setBusy(false));
  }

  return (
    <div>
      <form className="publish-one" aria-label="Publish to one collector" onSubmit={publish}>
        <label htmlFor="publish-collector">Collector</label>
        <CollectorField id="publish-collector" name="collector" error={error} required />
        <button type="submit" className="button" disabled={busy}>
          Publish to collector
        </button>
      </form>
      <ErrorMessage error={error} />
    </div>
  );
}
