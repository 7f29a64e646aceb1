/**
 * Publishing to one collector, by id or by picking a name the input
 * suggests: the quick path for trying a commit on one machine (it also
 * includes a collector a rollback pinned, since the publish names it).
 */
import { useState, type FormEvent } from "react";
import type { Rollout } from "../../../shared/rollouts.ts";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { publishedText } from "./PublishPlanner.tsx";

export function PublishOne({ onPublished }: { onPublished: (result: string) => void }) {
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [matches, setMatches] = useState<{ id: string; name: string }[]>([]);

  function publish(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const id = String(new FormData(event.currentTarget).get("collectorId") ?? "").trim();
    if (id === "") return;
    setBusy(true);
    setError(null);
    api
      .post<Rollout>(`/publish/${encodeURIComponent(id)}`)
      .then((rollout) => onPublished(publishedText(rollout)), setError)
      .finally(() => setBusy(false));
  }

  /** Suggests collectors for what is typed; the value sent is the id. */
  function suggest(text: string) {
    const q = text.trim();
    if (q.length < 2) return setMatches([]);
    api.get<{ items: { id: string; name: string }[] }>(`/collectors?limit=20&q=${encodeURIComponent(q)}`).then(
      (page) => setMatches(page.items),
      () => setMatches([]),
    );
  }

  return (
    <div>
      <form className="publish-one" aria-label="Publish to one collector" onSubmit={publish}>
        <label htmlFor="publish-collector">Collector id</label>
        <input
          id="publish-collector"
          name="collectorId"
          list="publish-collector-options"
          autoComplete="off"
          required
          placeholder="id, or type a name"
          onChange={(event) => suggest(event.currentTarget.value)}
        />
        <datalist id="publish-collector-options">
          {matches.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </datalist>
        <button type="submit" className="button" disabled={busy}>
          Publish to collector
        </button>
      </form>
      <ErrorMessage error={error} />
    </div>
  );
}
