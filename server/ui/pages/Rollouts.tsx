/**
 * Every rollout at /ui/rollouts, newest first (GET /api/v1/rollouts, "Load
 * more" follows its cursor): publishes to the fleet (all at once or staged),
 * to one or several collectors, attribute changes and rollbacks, each with
 * when and by whom, its commit, its outcome and counts. A rollout that ended
 * shows the counts kept when it ended (nothing left applying: each collector
 * current or failed, or offline or reporting only); one still running shows
 * how many collectors it covers and changed. Rollout events refresh the list.
 */
import type { RolloutSummary } from "../../../shared/rollouts.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { ListSummary } from "../components/ListSummary.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { recordHref } from "../components/RecordName.tsx";
import { StatusBadge, type Tone } from "../components/StatusBadge.tsx";
import { useLiveEvents } from "../events.ts";
import { shortCommit } from "../format.ts";
import { usePages } from "../list.ts";
import { plural } from "../publish/plan.ts";
import { useThrottledCounter } from "../refresh.ts";
import { Link } from "../router.tsx";

const PAGE_SIZE = 50;

const KIND_WORDS: Record<RolloutSummary["kind"], string> = { publish: "Publish", rollback: "Rollback", attributes: "Attribute change" };

const OUTCOMES: Record<string, { text: string; tone: Tone }> = {
  completed: { text: "completed", tone: "ok" },
  completed_with_errors: { text: "completed with failures", tone: "error" },
  aborted: { text: "aborted", tone: "error" },
  not_recorded: { text: "ended, not recorded", tone: "neutral" },
  paused: { text: "paused", tone: "warn" },
  running: { text: "in progress", tone: "info" },
};

function Outcome({ rollout }: { rollout: RolloutSummary }) {
  const key = rollout.ended?.outcome ?? (rollout.phase === "paused" ? "paused" : "running");
  const { text, tone } = OUTCOMES[key]!;
  return <StatusBadge status={`rollout-${key}`} label={text} tone={tone} />;
}

/** What it reached: the fleet, one collector (linked), or several edited ones. */
function Scope({ rollout }: { rollout: RolloutSummary }) {
  if (rollout.scope === "fleet") return <>fleet</>;
  if (rollout.scope === "collectors") return <>{plural(rollout.collectors, "collector")}</>;
  return (
    <Link href={recordHref("collector", rollout.scope)}>
      <code>{rollout.scope}</code>
    </Link>
  );
}

/** The counts kept at its end, else what it covers (so far, or when its end was not recorded). */
function Counts({ rollout }: { rollout: RolloutSummary }) {
  const { ended } = rollout;
  const parts: string[] = [];
  if (ended && ended.outcome !== "not_recorded") {
    const { current, failed, offline, reporting_only, queued } = ended.counts;
    parts.push(`${current} current`, `${failed} failed`);
    if (offline > 0) parts.push(`${offline} offline`);
    if (reporting_only > 0) parts.push(`${reporting_only} reporting only`);
    if (queued > 0) parts.push(`${queued} never released`);
    if (ended.handedOn) parts.push(`${ended.handedOn} given a later rollout's config first`);
  } else {
    parts.push(plural(rollout.collectors, "collector"), `${rollout.changed} changed`);
  }
  if (rollout.interrupted) parts.push(`interrupted: ${rollout.interrupted.written} of ${rollout.interrupted.planned} written`);
  for (const resumed of rollout.resumes ?? []) parts.push(`${resumed.collectors} already moved by an interrupted publish`);
  if (rollout.skipped > 0) parts.push(`${rollout.skipped} skipped`);
  if (rollout.pinned > 0) parts.push(`${rollout.pinned} pinned`);
  return <>{parts.join(" · ")}</>;
}

export function RolloutsPage() {
  const [events, bump] = useThrottledCounter(2000);
  useLiveEvents(["rollout"], bump);
  const { items, nextCursor, error, loading, loadMore } = usePages("/rollouts", (cursor) => ({ limit: PAGE_SIZE, cursor }), String(events));
  return (
    <section aria-labelledby="rollouts-title">
      <div className="page-head">
        <h1 id="rollouts-title">Rollouts</h1>
      </div>
      <p className="hint">
        Every publish, attribute change and rollback, newest first. Publish and follow the latest fleet rollout on <Link href="/ui/changes">Changes</Link>.
      </p>
      <ErrorMessage error={error} />
      <ListSummary
        loading={loading}
        error={error}
        count={items.length}
        more={nextCursor !== null}
        filtered={false}
        noun={["rollout", "rollouts"]}
        empty="Nothing published yet."
        noMatch="Nothing published yet."
      />
      {items.length > 0 && (
        <ListTable
          caption={{ id: "rollouts-caption", text: "Rollouts" }}
          className="rollout-list"
          columns={["Started", "Kind", "Scope", "Commit", "Who", "Outcome", "Collectors"]}
        >
          {items.map((rollout) => (
            <tr key={rollout.id}>
              <td>
                <LastSeen at={rollout.startedAt} />
              </td>
              <th scope="row">
                {KIND_WORDS[rollout.kind]}
                {rollout.batchEnds && <span className="muted"> · staged, {plural(rollout.batchEnds.length, "batch", "batches")}</span>}
              </th>
              <td>
                <Scope rollout={rollout} />
              </td>
              <td>
                <Link href={`/ui/changes?commit=${rollout.commit}`} title={rollout.commit}>
                  <code>{shortCommit(rollout.commit)}</code>
                </Link>
              </td>
              <td>
                <code>{rollout.actor}</code>
              </td>
              <td>
                <Outcome rollout={rollout} />
              </td>
              <td>
                <Counts rollout={rollout} />
              </td>
            </tr>
          ))}
        </ListTable>
      )}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}
