/**
 * Onboarding: install commands for svc-agent (POST /agents/snippet) and for a
 * collector (POST /collectors/snippet), each shown once in a read-only box
 * with a Copy button; the bootstrap files of either runtime, for hosts set
 * up by hand or by configuration management rather than install.sh; and
 * the enrollment tokens minted (GET /enrollment-tokens) with Revoke
 * (DELETE /enrollment-tokens/{id}). What cannot work is not offered: without
 * a usable externalUrl (system health `onboarding`) the commands and files are
 * disabled with the reason, and without svc-agent packages in downloads.dir
 * so is installing the agent.
 * Viewers see the token list only: everything else mints a credential.
 */
import { useEffect, useState, type FormEvent } from "react";
import type { BootstrapFiles, EnrollmentToken } from "../../../shared/enrollment.ts";
import { api } from "../client.ts";
import { useAction } from "../action.ts";
import { BootstrapFileList, SnippetBox, type Snippet } from "../components/InstallMaterial.tsx";
import { CollectorField } from "../components/CollectorField.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { useCanWrite, useHasScope } from "../schema/editing.tsx";
import { SetupWarning, useOnboardingReadiness } from "../components/SetupWarnings.tsx";
import type { OnboardingReadiness } from "../../../shared/system.ts";
import { FieldError, fieldProps } from "../components/FieldError.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { StatusBadge, type Tone } from "../components/StatusBadge.tsx";
import { usePages } from "../list.ts";
import "./Onboarding.css";
import { MODE_NAMES, RUNTIME_NAMES, type Runtime } from "../../../shared/vocabulary.ts";

const PAGE_SIZE = 100;

/** Asks the API for an install snippet (which mints its token); the answer, or the API's error, replaces the last. */
function useSnippet(onMinted: () => void) {
  const [snippet, setSnippet] = useState<Snippet | null>(null);
  const { busy, error, setError, run } = useAction();
  function mint(load: () => Promise<Snippet>) {
    run(
      load,
      (answer) => {
        setSnippet(answer);
        onMinted();
      },
      (caught) => {
        setSnippet(null);
        setError(caught);
      },
    );
  }
  return { snippet, error, busy, mint };
}

/** Why a snippet cannot work, or null: the first failing precondition the server reported. */
function blocker(...checks: (OnboardingReadiness[keyof Omit<OnboardingReadiness, "externalUrlSource">] | undefined)[]): string | null {
  return checks.find((check) => check !== undefined && !check.ready)?.problem ?? null;
}

function AgentSnippet({ onMinted, readiness }: { onMinted: () => void; readiness: OnboardingReadiness | null }) {
  const { snippet, error, busy, mint } = useSnippet(onMinted);
  const blocked = blocker(readiness?.collectorSnippet, readiness?.agentPackages);
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const query = new URLSearchParams();
    const maxUses = String(form.get("maxUses") ?? "").trim();
    if (maxUses !== "") query.set("maxUses", maxUses);
    const environment = String(form.get("environment") ?? "").trim();
    if (environment !== "") query.set("environment", environment);
    mint(() => api.post("/agents/snippet", { query: Object.fromEntries(query) }));
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
          <button type="submit" className="button primary" disabled={busy || blocked !== null} aria-describedby={blocked ? "agent-blocked" : undefined}>
            Create agent command
          </button>
        </div>
      </form>
      {blocked && <SetupWarning id="agent-blocked" title="Unavailable" problem={blocked} />}
      <ErrorMessage error={error} />
      {snippet && <SnippetBox id="agent-snippet" label="Agent install command" snippet={snippet} />}
    </section>
  );
}

function CollectorSnippet({ onMinted, readiness }: { onMinted: () => void; readiness: OnboardingReadiness | null }) {
  const { snippet, error, busy, mint } = useSnippet(onMinted);
  const blocked = blocker(readiness?.collectorSnippet);
  const noAgent = blocker(readiness?.agentPackages);
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const query = new URLSearchParams({ managementMode: String(form.get("managementMode") ?? "opamp") });
    for (const key of ["environment", "collectorId"]) {
      const value = String(form.get(key) ?? "").trim();
      if (value !== "") query.set(key, value);
    }
    if (form.get("agent") === "on") query.set("agent", "true");
    mint(() => api.post("/collectors/snippet", { query: Object.fromEntries(query) }));
  }
  return (
    <section className="detail-block onboarding-card" aria-labelledby="collector-title">
      <h2 id="collector-title">Enroll a collector</h2>
      <p className="muted">
        Run on the collector's host. {MODE_NAMES.opamp} uses a single-use enrollment token; {MODE_NAMES["rcfg-remotecfg"]} needs an existing collector, by name
        or id.
      </p>
      <form className="filters" aria-label="Collector install command" onSubmit={onSubmit}>
        <div className="field">
          <label htmlFor="collector-mode">Management</label>
          <select id="collector-mode" name="managementMode" defaultValue="opamp">
            <option value="opamp">{MODE_NAMES.opamp}</option>
            <option value="rcfg-remotecfg">{MODE_NAMES["rcfg-remotecfg"]}</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor="collector-environment">Environment</label>
          <input id="collector-environment" name="environment" maxLength={200} placeholder="prod" />
        </div>
        <div className="field">
          <label htmlFor="collector-id">Collector</label>
          <CollectorField id="collector-id" name="collectorId" error={error} placeholder="optional" aria-describedby="collector-id-hint" />
          <span id="collector-id-hint" className="hint">
            existing collector, by name or id; required for {MODE_NAMES["rcfg-remotecfg"]}
          </span>
        </div>
        <div className="field checkbox-field">
          <label title={noAgent ?? undefined}>
            <input type="checkbox" name="agent" disabled={noAgent !== null} aria-describedby={noAgent ? "collector-agent-blocked" : undefined} />
            {" Also install svc-agent"}
          </label>
          {noAgent && (
            <span id="collector-agent-blocked" className="hint">
              no svc-agent packages on the server
            </span>
          )}
        </div>
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy || blocked !== null} aria-describedby={blocked ? "collector-blocked" : undefined}>
            Create collector command
          </button>
        </div>
      </form>
      {blocked && <SetupWarning id="collector-blocked" title="Unavailable" problem={blocked} />}
      <ErrorMessage error={error} />
      {snippet && <SnippetBox id="collector-snippet" label="Collector install command" snippet={snippet} />}
    </section>
  );
}

const RUNTIME_CHOICES: { value: Runtime; label: string; hint: string }[] = [
  { value: "otelcol", label: RUNTIME_NAMES.otelcol, hint: "config arrives over OpAMP" },
  { value: "alloy", label: RUNTIME_NAMES.alloy, hint: "polls for its config by remote config" },
];

/**
 * A runtime's bootstrap files, each in a code block with its target path and
 * a Copy button. The token is one the user holds (POSTed in the body, never
 * in a URL) or a fresh one: a single-use opamp enrollment token for the
 * OpenTelemetry Collector; for Alloy the collector's own token, which replaces its previous one.
 */
function BootstrapFilesForm({ onMinted, readiness, canMint }: { onMinted: () => void; readiness: OnboardingReadiness | null; canMint: boolean }) {
  const blocked = blocker(readiness?.collectorSnippet);
  const [runtime, setRuntime] = useState<Runtime>("otelcol");
  // Minting needs collectors:enroll; without it only a token the user holds renders files.
  const [source, setSource] = useState<"mint" | "held">(canMint ? "mint" : "held");
  const [answer, setAnswer] = useState<(BootstrapFiles & { minted: boolean }) | null>(null);
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    setAnswer(null);
    setError(null);
  }, [runtime, source]);

  async function files(form: FormData): Promise<BootstrapFiles> {
    const text = (key: string) => String(form.get(key) ?? "").trim();
    if (source === "held") return api.post("/bootstrap-files", { body: { token: text("token"), runtime } });
    if (runtime === "alloy") return api.post("/collectors/{id}/bootstrap", { params: { id: text("collectorId") }, query: { runtime: "alloy" } });
    // One call that checks the public URL before it mints: a refusal leaves no token behind.
    const environment = text("environment");
    const minted = await api.post("/collectors/bootstrap", { query: { environment: environment === "" ? undefined : environment } });
    onMinted();
    return minted;
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    run(
      () => files(form),
      (result) => setAnswer({ ...result, minted: source === "mint" }),
      (caught) => {
        setAnswer(null);
        setError(caught);
      },
    );
  }

  const chosen = RUNTIME_CHOICES.find((c) => c.value === runtime)!;
  return (
    <section className="detail-block onboarding-card" aria-labelledby="bootstrap-title">
      <h2 id="bootstrap-title">Bootstrap files</h2>
      <p className="muted">For hosts set up by hand or by configuration management: the files install.sh would write, ready to copy.</p>
      <form className="filters bootstrap-form" aria-label="Bootstrap files" onSubmit={onSubmit}>
        <fieldset className="choice">
          <legend>Runtime</legend>
          {RUNTIME_CHOICES.map((choice) => (
            <label key={choice.value}>
              <input type="radio" name="runtime" value={choice.value} checked={runtime === choice.value} onChange={() => setRuntime(choice.value)} />{" "}
              {choice.label} <span className="muted">({choice.hint})</span>
            </label>
          ))}
        </fieldset>
        <fieldset className="choice">
          <legend>Token</legend>
          <label>
            <input type="radio" name="source" value="mint" checked={source === "mint"} disabled={!canMint} onChange={() => setSource("mint")} />{" "}
            {runtime === "otelcol" ? "Mint a single-use enrollment token" : "Mint the collector's token"}
            {!canMint && <span className="muted"> (needs collectors:enroll, held by admins)</span>}
          </label>
          <label>
            <input type="radio" name="source" value="held" checked={source === "held"} onChange={() => setSource("held")} /> Use a token I have
          </label>
        </fieldset>
        {source === "held" ? (
          <div className="field grow">
            <label htmlFor="bootstrap-token">{runtime === "otelcol" ? "Enrollment token" : "Collector token"}</label>
            <input
              id="bootstrap-token"
              name="token"
              type="password"
              autoComplete="off"
              spellCheck={false}
              required
              placeholder={runtime === "otelcol" ? "svcen_…" : "svcct_…"}
              {...fieldProps(error, "token", "bootstrap-token-error")}
            />
            <FieldError id="bootstrap-token-error" error={error} field="token" />
          </div>
        ) : runtime === "alloy" ? (
          <div className="field grow">
            <label htmlFor="bootstrap-collector">Collector</label>
            <CollectorField
              id="bootstrap-collector"
              name="collectorId"
              error={error}
              required
              placeholder="name or id"
              aria-describedby="bootstrap-collector-hint"
            />
            <span id="bootstrap-collector-hint" className="hint">
              an {RUNTIME_NAMES.alloy} collector, by name or id; its previous token stops working
            </span>
          </div>
        ) : (
          <div className="field grow">
            <label htmlFor="bootstrap-environment">Environment</label>
            <input
              id="bootstrap-environment"
              name="environment"
              maxLength={200}
              placeholder="prod"
              {...fieldProps(error, "environment", "bootstrap-environment-error")}
            />
            <FieldError id="bootstrap-environment-error" error={error} field="environment" />
          </div>
        )}
        <div className="filter-actions">
          <button type="submit" className="button primary" disabled={busy || blocked !== null} aria-describedby={blocked ? "bootstrap-blocked" : undefined}>
            Show bootstrap files
          </button>
        </div>
      </form>
      {blocked && <SetupWarning id="bootstrap-blocked" title="Unavailable" problem={blocked} />}
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {answer && `${answer.files.length} file${answer.files.length === 1 ? "" : "s"} for ${chosen.label}.`}
      </p>
      {answer?.minted && <p className="hint">Shown once: the files hold a new token.</p>}
      {answer && <BootstrapFileList files={answer.files} />}
    </section>
  );
}

function tokenState(token: EnrollmentToken): "revoked" | "expired" | "used up" | "active" {
  if (token.revokedAt !== null) return "revoked";
  if (Date.parse(token.expiresAt) <= Date.now()) return "expired";
  if (token.maxUses !== null && token.uses >= token.maxUses) return "used up";
  return "active";
}

const STATE_LOOKS: Record<string, { symbol: string; tone: Tone }> = {
  active: { symbol: "●", tone: "ok" },
  revoked: { symbol: "⊘", tone: "error" },
  expired: { symbol: "■", tone: "neutral" },
  "used up": { symbol: "○", tone: "neutral" },
};

function TokenList({ refresh, canWrite }: { refresh: number; canWrite: boolean }) {
  const [reload, setReload] = useState(0);
  const { items, nextCursor, error, setError, loading, loadMore } = usePages(
    "/enrollment-tokens",
    (cursor) => ({ limit: PAGE_SIZE, cursor }),
    `${refresh}:${reload}`,
  );
  const revoking = useAction();

  function revoke(token: EnrollmentToken) {
    if (!window.confirm(`Revoke enrollment token ${token.id}? It stops working at once.`)) return;
    // A refusal shows where the list's own error does.
    revoking.run(
      () => api.delete("/enrollment-tokens/{id}", { params: { id: token.id } }),
      () => {
        setError(null);
        setReload((n) => n + 1);
      },
      setError,
    );
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
        <ListTable
          caption={{ id: "tokens-caption", text: "Enrollment tokens" }}
          columns={["Token", "Kind", "Environment", "Uses", "Expires", "State"]}
          numeric={[3]}
          actions
        >
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
                <td className="num">
                  {token.uses} / {token.maxUses ?? "unlimited"}
                </td>
                <td>
                  <LastSeen at={token.expiresAt} />
                </td>
                <td>
                  <StatusBadge
                    status={`token-${state}`}
                    className={`token-${state.replace(" ", "-")}`}
                    label={state}
                    symbol={STATE_LOOKS[state]?.symbol}
                    tone={STATE_LOOKS[state]?.tone}
                  />
                </td>
                <td>
                  {canWrite && token.revokedAt === null && (
                    <button type="button" className="button" onClick={() => revoke(token)} aria-label={`Revoke ${token.id}`}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </ListTable>
      )}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}

/** What an editor sees instead of the collector install command: who may mint one, and why. */
function EnrollNote() {
  return (
    <section className="detail-block onboarding-card" aria-labelledby="collector-title">
      <h2 id="collector-title">Enroll a collector</h2>
      <p className="note" role="note">
        A collector's install command and bootstrap files carry its credential, which receives its config with every secret filled in, so making them needs the
        collectors:enroll scope (admins). Ask an admin, or use a token you were given under Bootstrap files.
      </p>
    </section>
  );
}

export function OnboardingPage() {
  const canWrite = useCanWrite();
  const canEnroll = useHasScope("collectors:enroll");
  const [minted, setMinted] = useState(0);
  const onMinted = () => setMinted((n) => n + 1);
  const readiness = useOnboardingReadiness(canWrite);
  return (
    <section aria-labelledby="onboarding-title">
      <div className="page-head">
        <h1 id="onboarding-title">Onboarding</h1>
      </div>
      {canWrite && (
        <>
          <AgentSnippet onMinted={onMinted} readiness={readiness} />
          {canEnroll ? <CollectorSnippet onMinted={onMinted} readiness={readiness} /> : <EnrollNote />}
          <BootstrapFilesForm onMinted={onMinted} readiness={readiness} canMint={canEnroll} />
        </>
      )}
      <TokenList refresh={minted} canWrite={canWrite} />
    </section>
  );
}
