/**
 * System health: what GET /api/v1/system/health says, as a table of its
 * top-level fields, under a warning for each onboarding precondition that
 * fails (externalUrl, svc-agent packages) with its fix. Until the session is
 * valid the API answers 401 and the page shows that error as it came.
 */
import { useCallback, useEffect, useState } from "react";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { SetupWarnings, type OnboardingReadiness } from "../components/SetupWarnings.tsx";

type Health = Record<string, unknown>;

export function SystemPage() {
  const [health, setHealth] = useState<Health | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);

  const load = useCallback(() => {
    setLoading(true);
    api
      .get<Health>("/system/health")
      .then((answer) => {
        setHealth(answer);
        setError(null);
      }, setError)
      .finally(() => setLoading(false));
  }, []);
  useEffect(load, [load]);

  return (
    <section aria-labelledby="system-title">
      <div className="page-head">
        <h1 id="system-title">System</h1>
        <button type="button" className="button" onClick={load} disabled={loading}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={error} />
      {loading && <p aria-live="polite">Loading…</p>}
      {health && !error && health.onboarding !== undefined && (
        <SetupWarnings readiness={health.onboarding as OnboardingReadiness} externalUrl={(health.externalUrl as string | null) ?? null} />
      )}
      {health && !error && (
        <table className="kv">
          <caption>Health</caption>
          <tbody>
            {Object.entries(health).map(([key, value]) => (
              <tr key={key}>
                <th scope="row">{key}</th>
                <td>{typeof value === "object" ? <pre>{JSON.stringify(value, null, 2)}</pre> : String(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
