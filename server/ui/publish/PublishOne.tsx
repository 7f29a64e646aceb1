/**
 * Publishing to one collector, named by what the person types: its name or
 * its id (the field suggests matches, and offers each collector of a shared
 * name as a choice): the quick path for trying a commit on one machine (it
 * also includes a collector a rollback pinned, since the publish names it).
 */
import type { FormEvent } from "react";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { CollectorField } from "../components/CollectorField.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { publishedText } from "./PublishPlanner.tsx";

export function PublishOne({ onPublished }: { onPublished: (result: string) => void }) {
  const { busy, error, run } = useAction();

  function publish(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const collector = String(new FormData(event.currentTarget).get("collector") ?? "").trim();
    if (collector === "") return;
    // The body's collectorIds, not /publish/{collectorId}: a collector may be named "plan" or "status".
    run(
      () => api.post("/publish", { body: { collectorIds: [collector] } }),
      (rollout) => onPublished(publishedText(rollout)),
    );
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
