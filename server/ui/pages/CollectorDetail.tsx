/**
 * One collector at /ui/collectors/{id}: who it is and how it is doing
 * (header, health, live throughput), what it runs (target and reported
 * config, whether it is pinned, rolled back by itself or drifted, push
 * history with diffs and rollback), a restart button (OpAMP), its own token, and the
 * sources and destinations active on it. Live collector events keep the
 * header current; config_target events refresh the config parts. Writers
 * also get its settings (rename, environment, tags, mode, delete); viewers
 * get the same page without any write controls.
 */
import { useEffect, useRef, useState, type ReactNode } from "react";
import { MODE_NAMES } from "../../../shared/vocabulary.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ActivationsSection } from "../collector/Activations.tsx";
import { ConfigHistorySection } from "../collector/ConfigHistory.tsx";
import { EditCollectorSection } from "../collector/EditCollector.tsx";
import { EffectiveConfigSection } from "../collector/EffectiveConfig.tsx";
import { AppliedPipelinesSection } from "../collector/Pipelines.tsx";
import { RestartSection } from "../collector/Restart.tsx";
import { ThroughputSection } from "../collector/Throughput.tsx";
import { TokenRotationSection } from "../collector/TokenRotation.tsx";
import type { Collector } from "../../../shared/collectors.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { isReportingOnly, ReportingOnlyNote } from "../components/ReportingOnly.tsx";
import { StatusBadge } from "../components/StatusBadge.tsx";
import { useLiveEvents } from "../events.ts";
import { Link } from "../router.tsx";
import { useHasScope } from "../schema/editing.tsx";
import { useSession } from "../session.tsx";
import { useTrustedKeys } from "../trust.ts";
import "../collector/collector.css";
import { Facts } from "../components/Facts.tsx";

/** Longer than the server's history write batching (50 ms), with room for a busy store. */
const HISTORY_SETTLE_MS = 400;

export function CollectorDetailPage({ id }: { id: string }) {
  const { state } = useSession();
  const canWrite = state.status === "signedIn" && state.user.role !== "viewer";
  // The collector's token reveals its config with secrets filled in: minting it is for collectors:enroll holders.
  const canEnroll = useHasScope("collectors:enroll");
  const canPublish = useHasScope("config:publish");
  const [collectorVersion, setCollectorVersion] = useState(0);
  const [configVersion, setConfigVersion] = useState(0);
  const {
    data: collector,
    setData: setCollector,
    error,
  } = useLoad<Collector>(() => api.get("/collectors/{id}", { params: { id } }), `${id}|${collectorVersion}`);

  // History entries are written a moment after the target (batched, server/rollout/rollout.ts
  // historyWrites) and send no event of their own: the history is read once more after that.
  const [historyVersion, setHistoryVersion] = useState(0);
  const historyTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (historyTimer.current && clearTimeout(historyTimer.current)), []);
  useLiveEvents(["collector", "config_target"], (event) => {
    if (event.type === "reconnected") {
      setCollectorVersion((n) => n + 1);
      setConfigVersion((n) => n + 1);
    } else if (event.id === id) {
      if (event.type === "collector") setCollectorVersion((n) => n + 1);
      else {
        setConfigVersion((n) => n + 1);
        if (historyTimer.current) clearTimeout(historyTimer.current);
        historyTimer.current = setTimeout(() => setHistoryVersion((n) => n + 1), HISTORY_SETTLE_MS);
      }
    }
  });

  return (
    <section aria-labelledby="collector-title">
      <p className="breadcrumb-back">
        <Link href="/ui/collectors">← All collectors</Link>
      </p>
      <div className="page-head">
        <h1 id="collector-title">{collector?.name ?? id}</h1>
        {collector && <StatusBadge status={collector.status} />}
      </div>
      <ErrorMessage error={error} />
      {!collector && !error && <p className="muted">Loading…</p>}
      {collector && (
        <>
          {isReportingOnly(collector) && <ReportingOnlyNote full />}
          {collector.cloneOf && <CloneNote cloneOf={collector.cloneOf} />}
          <CollectorFacts collector={collector} />
          <ThroughputSection collectorId={id} reload={configVersion} />
          <AppliedPipelinesSection collector={collector} reload={collectorVersion + configVersion} />
          <EffectiveConfigSection collectorId={id} reload={configVersion} canWrite={canWrite} onChanged={() => setConfigVersion((n) => n + 1)} />
          <ConfigHistorySection
            collectorId={id}
            reload={configVersion + historyVersion}
            canWrite={canWrite}
            onRolledBack={() => setConfigVersion((n) => n + 1)}
          />
          {canPublish && collector.managementMode === "opamp" && <RestartSection collector={collector} />}
          {canEnroll && <TokenRotationSection collector={collector} />}
          {canWrite && <EditCollectorSection collector={collector} onSaved={setCollector} />}
          <ActivationsSection collectorId={id} canWrite={canWrite} reload={configVersion} />
        </>
      )}
    </section>
  );
}

/** The collector came from a cloned image: it presented another live collector's instance UID and was split off. */
function CloneNote({ cloneOf }: { cloneOf: NonNullable<Collector["cloneOf"]> }) {
  return (
    <div className="target-note target-note-failed" role="note" aria-label="Cloned collector">
      <p>
        This collector presented the instance UID of <Link href={`/ui/collectors/${encodeURIComponent(cloneOf.collectorId)}`}>{cloneOf.name}</Link> (
        <code>{cloneOf.instanceUid}</code>) while that one was connected, as a clone of one VM image does. svc gave it a new instance UID and made it its own
        collector, with that one's environment and tags, <LastSeen at={cloneOf.at} />. It still holds that collector's credential: give it its own enrollment
        token (and clear the supervisor's storage directory when cloning images) to keep them apart.
      </p>
    </div>
  );
}

function health(collector: Collector): ReactNode {
  const h = collector.health;
  if (h === null) return <span className="muted">not reported yet</span>;
  const word = h.healthy === null ? "unknown" : h.healthy ? "healthy" : "unhealthy";
  return (
    <>
      {word}
      {h.error && <span className="config-error"> — {h.error}</span>}
      <span className="muted">
        {" "}
        (over {h.channel}, contact expected every {h.intervalSeconds} s)
      </span>
    </>
  );
}

/** Key=value pairs as the list shows tags, or a dash for none. */
function pairs(entries: [string, string][], label: string): ReactNode {
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="tags" aria-label={label}>
      {entries.map(([key, value]) => (
        <li key={key} className="tag">
          {key}={value}
        </li>
      ))}
    </ul>
  );
}

/** Each reported attribute, marked trusted (matchers may read it) or not (shown only, and read by attribute references). */
function ReportedAttributes({ reported }: { reported: Record<string, string> }) {
  const trusted = useTrustedKeys();
  const entries = Object.entries(reported).sort(([a], [b]) => (a < b ? -1 : 1));
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="tags" aria-label="Reported attributes">
      {entries.map(([key, value]) => (
        <li key={key} className="tag" title={trusted.has(key) ? "Trusted: matchers may read it" : "Not trusted: matchers read it as absent"}>
          {key}={value} <span className="muted">{trusted.has(key) ? "(trusted)" : "(reported)"}</span>
        </li>
      ))}
    </ul>
  );
}

function CollectorFacts({ collector }: { collector: Collector }) {
  const rows: [string, ReactNode][] = [
    ["Collector id", <code>{collector.id}</code>],
    ["Status", <StatusBadge status={collector.status} />],
    ["Last seen", <LastSeen at={collector.lastSeen} />],
    ["Environment", collector.environment ?? <span className="muted">—</span>],
    ["Management", MODE_NAMES[collector.managementMode] ?? collector.managementMode],
    ["Tags", pairs(Object.entries(collector.tags), "Tags")],
    // Facts the collector gives about itself: matchers read only the trusted ones (System page); tags and environment win on the same key.
    ["Reported attributes", <ReportedAttributes reported={collector.reported ?? {}} />],
    ["Health", health(collector)],
    ["Created", <LastSeen at={collector.createdAt} />],
  ];
  return (
    <div className="detail-block">
      <Facts caption="Collector facts" rows={rows} />
    </div>
  );
}
