/**
 * Onboarding: install commands for svc-agent (GET /agents/snippet) and for a
 * collector (GET /collectors/snippet), each shown once in a read-only box
 * with a Copy button, and the enrollment tokens they mint
 * (GET /enrollment-tokens) with Revoke (DELETE /enrollment-tokens/{id}).
 * A server without externalUrl answers 409 external_url_missing; its message
 * is shown as the API wrote it.
 */
import { useEffect, useState, type FormEvent } from "react";
import { api, ApiError } from "../api.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { LastSeen } from "../components/LastSeen.tsx";

interface EnrollmentToken {
  id: string;
  kind: "opamp" | "agent";
  collectorId: string | null;
  environment: string | null;
  expiresAt: string;
  maxUses: number | null;
  uses: number;
  boundInstanceUid: string | null;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
}

interface TokenPage {
  items: EnrollmentToken[];
  nextCursor: string | null;
}

interface Snippet {
  snippet: string;
  expiresAt: string | null;
}

const PAGE_SIZE = 100;

/** The one-liner in a read-only box, with a Copy button that says when it worked. */
function SnippetBox({ id, label, snippet }: { id: string; label: string; snippet: Snippet }) {
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => setCopy("idle"), [snippet]);
  function onCopy() {
    navigator.clipboard.writeText(snippet.snippet).then(
      () => setCopy("copied"),
      () => setCopy("failed"),
    );
  }
  return (
    <div className="snippet">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="snippet-box"
        readOnly
        rows={4}
        spellCheck={false}
        value={snippet.snippet}
        onFocus={(event) => event.currentTarget.select()}
      />
      <div className="snippet-actions">
        <button type="button" className="button" onClick={onCopy}>
          Copy
        </button>
        <span role="status" className="muted">
          {copy === "copied" ? "Copied" : copy === "failed" ? "Could not copy; select the text and copy it." : ""}
        </span>
      </div>
      <p className="hint">
        Shown once: the command holds a new token.
        {snippet.expiresAt && (
          <>
            {" "}
            Expires <LastSeen at={snippet.expiresAt} />.
          </>
        )}
      </p>
    </div>
  );
}

function AgentSnippet({ onMinted }: { onMinted: () => void }) {
  const [snippet, setSnippet] = useState<Snippet | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const query = new URLSearchParams();
    const maxUses = String(form.get("maxUses") ?? "").trim();
    if (maxUses !== "") query.set("maxUses", maxUses);
    const environment = String(form.get("environment") ?? "").trim();
    if (environment !== "") query.set("environment", environment);
    setBusy(true);
    setError(null);
    api
      .get<Snippet>(`/agents/snippet?${query}`)
      .then((answer) => {
        setSnippet(answer);
        onMinted();
      }, (caught: ApiError) => {
        setSnippet(null);
        setError(caught);
      })
      .finally(() => setBusy(false));
  }
  return (
    <section className="detail-block onboarding-card" aria-labelledby="agent-title">
      <h2 id="agent-title">Install svc-agent</h2>
      <p className="muted">Run on a host to install the agent and enroll it; it reports the host's services and logs.</p>
      <form className="filters" aria-label="Agent install command" onSubmit={onSubmit}>
        <div className="field">
          <label htmlFor="agent-max-uses">Hosts that may use it</label>
          <input id="agent-max-uses" name="maxUses" type="number" min={1} max={100000} defaultValue={1} required />
        </div>
        <div className="field grow">
          <label htmlFor="agent-environment">Environment</label>
          <input id="agent-environment" name="environment" maxLength={200} placeholder="prod" />
        </div>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy}>
            Create agent command
          </button>
        </div>
      </form>
      <ErrorMessage error={error} />
      {snippet && <SnippetBox id="agent-snippet" label="Agent install command" snippet={snippet} />}
    </section>
  );
}

function CollectorSnippet({ onMinted }: { onMinted: () => void }) {
  const [snippet, setSnippet] = useState<Snippet | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const query = new URLSearchParams({ managementMode: String(form.get("managementMode") ?? "opamp") });
    for (const key of ["environment", "collectorId"]) {
      const value = String(form.get(key) ?? "").trim();
      if (value !== "") query.set(key, value);
    }
    if (form.get("agent") === "on") query.set("agent", "true");
    setBusy(true);
    setError(null);
    api
      .get<Snippet>(`/collectors/snippet?${query}`)
      .then((answer) => {
        setSnippet(answer);
        onMinted();
      }, (caught: ApiError) => {
        setSnippet(null);
        setError(caught);
      })
      .finally(() => setBusy(false));
  }
  return (
    <section className="detail-block onboarding-card" aria-labelledby="collector-title">
      <h2 id="collector-title">Enroll a collector</h2>
      <p className="muted">Run on the collector's host. OpAMP uses a single-use enrollment token; remotecfg needs an existing collector's id.</p>
      <form className="filters" aria-label="Collector install command" onSubmit={onSubmit}>
        <div className="field">
          <label htmlFor="collector-mode">Management</label>
          <select id="collector-mode" name="managementMode" defaultValue="opamp">
            <option value="opamp">OpAMP</option>
            <option value="rcfg-remotecfg">remotecfg</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="collector-environment">Environment</label>
          <input id="collector-environment" name="environment" maxLength={200} placeholder="prod" />
        </div>
        <div className="field">
          <label htmlFor="collector-id">Collector id</label>
          <input id="collector-id" name="collectorId" placeholder="optional" aria-describedby="collector-id-hint" />
          <span id="collector-id-hint" className="hint">
            existing collector; required for remotecfg
          </span>
        </div>
        <div className="field checkbox-field">
          <label>
            <input type="checkbox" name="agent" /> Also install svc-agent
          </label>
        </div>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy}>
            Create collector command
          </button>
        </div>
      </form>
      <ErrorMessage error={error} />
      {snippet && <SnippetBox id="collector-snippet" label="Collector install command" snippet={snippet} />}
    </section>
  );
}

function tokenState(token: EnrollmentToken): "revoked" | "expired" | "used up" | "active" {
  if (token.revokedAt !== null) return "revoked";
  if (Date.parse(token.expiresAt) <= Date.now()) return "expired";
  if (token.maxUses !== null && token.uses >= token.maxUses) return "used up";
  return "active";
}

const STATE_SYMBOLS: Record<string, string> = { active: "●", revoked: "⊘", expired: "■", "used up": "○" };

function TokenList({ refresh }: { refresh: number }) {
  const [items, setItems] = useState<EnrollmentToken[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let current = true;
    setLoading(true);
    api
      .get<TokenPage>(`/enrollment-tokens?limit=${PAGE_SIZE}`)
      .then(
        (page) => {
          if (!current) return;
          setItems(page.items);
          setNextCursor(page.nextCursor);
          setError(null);
        },
        (caught: ApiError) => current && setError(caught),
      )
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
  }, [refresh, reload]);

  function loadMore() {
    if (nextCursor === null) return;
    setLoading(true);
    api
      .get<TokenPage>(`/enrollment-tokens?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(nextCursor)}`)
      .then((page) => {
        setItems((before) => [...before, ...page.items]);
        setNextCursor(page.nextCursor);
        setError(null);
      }, setError)
      .finally(() => setLoading(false));
  }

  function revoke(token: EnrollmentToken) {
    if (!window.confirm(`Revoke enrollment token ${token.id}? It stops working at once.`)) return;
    api.delete(`/enrollment-tokens/${encodeURIComponent(token.id)}`).then(() => {
      setError(null);
      setReload((n) => n + 1);
    }, setError);
  }

  return (
    <section className="detail-block" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Enrollment tokens</h2>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {loading
          ? "Loading…"
          : items.length === 0
            ? "No enrollment tokens."
            : `Showing ${items.length}${nextCursor !== null ? "+" : ""} token${items.length === 1 ? "" : "s"}, oldest first.`}
      </p>
      {items.length > 0 && (
        <div className="table-scroll" role="region" aria-labelledby="tokens-caption" tabIndex={0}>
          <table className="list">
            <caption id="tokens-caption" className="visually-hidden">
              Enrollment tokens
            </caption>
            <thead>
              <tr>
                <th scope="col">Token</th>
                <th scope="col">Kind</th>
                <th scope="col">Environment</th>
                <th scope="col">Uses</th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((token) => {
                const state = tokenState(token);
                return (
                  <tr key={token.id}>
                    <th scope="row">
                      <code className="id">{token.id}</code>
                      <span className="id muted">by {token.createdBy}</span>
                    </th>
                    <td>{token.kind}</td>
                    <td>{token.environment ?? <span className="muted">—</span>}</td>
                    <td>
                      {token.uses} / {token.maxUses ?? "unlimited"}
                    </td>
                    <td>
                      <LastSeen at={token.expiresAt} />
                    </td>
                    <td>
                      <span className={`status token-${state.replace(" ", "-")}`}>
                        <span aria-hidden="true" className="status-symbol">
                          {STATE_SYMBOLS[state]}
                        </span>
                        {state}
                      </span>
                    </td>
                    <td>
                      {token.revokedAt === null && (
                        <button type="button" className="button" onClick={() => revoke(token)} aria-label={`Revoke ${token.id}`}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}

export function OnboardingPage() {
  const [minted, setMinted] = useState(0);
  const onMinted = () => setMinted((n) => n + 1);
  return (
    <section aria-labelledby="onboarding-title">
      <div className="page-head">
        <h1 id="onboarding-title">Onboarding</h1>
      </div>
      <AgentSnippet onMinted={onMinted} />
      <CollectorSnippet onMinted={onMinted} />
      <TokenList refresh={minted} />
    </section>
  );
}
