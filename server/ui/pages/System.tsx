/**
 * System health: what GET /api/v1/system/health says, as labelled rows in a
 * few tables (control plane, storage, onboarding, collectors, channels), under
 * a warning for each onboarding precondition that fails (externalUrl,
 * svc-agent packages) with its fix, and the trusted reported attributes
 * (TrustedAttributes.tsx). Until the session is valid the API
 * answers 401 and the page shows that error as it came.
 */
import { useState, type ReactNode } from "react";
import { COLLECTOR_STATUSES } from "../../../shared/collector-status.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { Facts } from "../components/Facts.tsx";
import { SetupWarnings } from "../components/SetupWarnings.tsx";
import type { Health, OnboardingReadiness, Readiness } from "../../../shared/system.ts";
import { formatDuration } from "../format.ts";
import { Link } from "../router.tsx";
import "./System.css";
import { TrustedAttributesSection } from "./TrustedAttributes.tsx";
import { StatusBadge, type Tone } from "../components/StatusBadge.tsx";
import { CHANNEL_NAMES as RUNTIME_CHANNELS } from "../../../shared/vocabulary.ts";

const URL_SOURCE: Record<OnboardingReadiness["externalUrlSource"], string> = {
  config: "externalUrl in the configuration",
  listen: "the address this server listens on (this host only)",
  unset: "not set",
};

const CHANNEL_NAMES: Record<string, string> = {
  opamp: RUNTIME_CHANNELS.opamp,
  remotecfg: RUNTIME_CHANNELS.remotecfg,
  metrics: "Own metrics intake",
  agents: "Host agents",
  bootstrap: "Bootstrap files",
  downloads: "Downloads",
};

export function SystemPage() {
  const [refreshed, setRefreshed] = useState(0);
  const { data: health, error, pending: loading } = useLoad(() => api.get("/system/health"), String(refreshed));

  return (
    <section aria-labelledby="system-title" className="system">
      <div className="page-head">
        <h1 id="system-title">System</h1>
        <button type="button" className="button" onClick={() => setRefreshed((n) => n + 1)} disabled={loading}>
          Refresh
        </button>
      </div>
      <ErrorMessage error={error} />
      {loading && !health && <p aria-live="polite">Loading…</p>}
      {health && !error && (
        <>
          <SetupWarnings readiness={health.onboarding} externalUrl={health.externalUrl} />
          <ControlPlane health={health} />
          <Storage storage={health.storage} />
          <Onboarding onboarding={health.onboarding} externalUrl={health.externalUrl} />
          <Collectors counts={health.collectors} />
          <Channels channels={health.channels} />
          <TrustedAttributesSection />
        </>
      )}
    </section>
  );
}

/** Each health state's shape and tone, those of its collector counterpart (ok/up as online, down as offline). */
const HEALTH_LOOK: Record<string, { symbol: string; tone: Tone }> = {
  ok: { symbol: "●", tone: "ok" },
  up: { symbol: "●", tone: "ok" },
  degraded: { symbol: "▲", tone: "warn" },
  down: { symbol: "■", tone: "error" },
};

/** A health state word with its shape and tone. */
function State({ state, label = state }: { state: string; label?: string }) {
  return <StatusBadge status={`health-${state}`} label={label} symbol={HEALTH_LOOK[state]?.symbol ?? "○"} tone={HEALTH_LOOK[state]?.tone ?? "neutral"} />;
}

function ControlPlane({ health }: { health: Health }) {
  return (
    <Facts
      caption="Control plane"
      rows={[
        ["Status", <State state={health.status} />],
        ["Version", health.version],
        ["Up for", formatDuration(health.uptimeSeconds)],
        ["Started", <time dateTime={health.startedAt}>{new Date(health.startedAt).toLocaleString()}</time>],
      ]}
    />
  );
}

function Storage({ storage }: { storage: Health["storage"] }) {
  const rows: [string, ReactNode][] = [
    ["Backend", storage.backend],
    ["Status", <State state={storage.status} />],
  ];
  if (storage.error) rows.push(["Problem", <span className="system-problem">{storage.error}</span>]);
  return <Facts caption="Storage" rows={rows} />;
}

/** Ready, or not with a pointer to the warning above, which says why and how to fix it (not repeated here). */
function ReadinessText({ readiness }: { readiness: Readiness }) {
  if (readiness.ready) return <State state="ok" label="ready" />;
  return (
    <>
      <State state="degraded" label="not ready" /> <span className="muted">· the warning above says how to fix it</span>
    </>
  );
}

function Onboarding({ onboarding, externalUrl }: { onboarding: OnboardingReadiness; externalUrl: string | null }) {
  return (
    <Facts
      caption="Onboarding"
      rows={[
        ["URL given to collectors", externalUrl ?? <span className="muted">none</span>],
        ["Taken from", URL_SOURCE[onboarding.externalUrlSource]],
        ["Collector install snippets", <ReadinessText readiness={onboarding.collectorSnippet} />],
        ["svc-agent packages", <ReadinessText readiness={onboarding.agentPackages} />],
      ]}
    />
  );
}

function Collectors({ counts }: { counts: Record<string, number> }) {
  return (
    <Facts
      caption="Collectors"
      rows={COLLECTOR_STATUSES.map((status) => [
        status[0]!.toUpperCase() + status.slice(1),
        <Link href={`/ui/collectors?status=${status}`} aria-label={`${counts[status] ?? 0} ${status}`}>
          {counts[status] ?? 0}
        </Link>,
      ])}
    />
  );
}

function Channels({ channels }: { channels: Health["channels"] }) {
  return (
    <Facts
      caption="Channels"
      rows={Object.entries(channels).map(([name, channel]) => [
        CHANNEL_NAMES[name] ?? name,
        <>
          <State state={channel.state} />
          {channel.connections !== undefined && (
            <span className="muted">
              {" "}
              · {channel.connections} connection{channel.connections === 1 ? "" : "s"}
            </span>
          )}
        </>,
      ])}
    />
  );
}
