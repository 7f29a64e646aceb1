/**
 * Drifted collectors (GET /collectors/drifted): those that applied their
 * target but report running something else. The list page links to them with
 * a count; the view (/ui/collectors?view=drifted, so it can be shared and Back
 * returns to it) names each, with the paths that differ; the diff is on the
 * collector's page. Drift moves with config_target events, so both refetch
 * on them, at most once a second however busy the fleet.
 */
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { useLiveEvents } from "../events.ts";
import { Link } from "../router.tsx";
import { plural } from "../publish/plan.ts";
import { useThrottledCounter } from "../refresh.ts";

const REFETCH_MS = 1000;

function useDrifted() {
  const [version, bump] = useThrottledCounter(REFETCH_MS);
  const { data, error } = useLoad(() => api.get("/collectors/drifted"), String(version));
  useLiveEvents(["config_target", "collector"], bump);
  return { items: data?.items ?? null, error };
}

/** The list page's way in: a chip with the count (nothing while it is not known). */
export function DriftedLink() {
  const { items } = useDrifted();
  return (
    <Link href="/ui/collectors?view=drifted" className={items && items.length > 0 ? "view-chip view-chip-alert" : "view-chip"}>
      Drifted{items ? ` (${items.length})` : ""}
    </Link>
  );
}

export function DriftedCollectors() {
  const { items, error } = useDrifted();
  return (
    <section aria-labelledby="drifted-title">
      <p className="breadcrumb-back">
        <Link href="/ui/collectors">← All collectors</Link>
      </p>
      <div className="page-head">
        <h1 id="drifted-title">Drifted collectors</h1>
      </div>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {items === null
          ? error
            ? ""
            : "Loading…"
          : items.length === 0
            ? "No collector runs anything other than its target."
            : `${plural(items.length, "drifted collector")}: each applied its target but runs something else. Open one for the diff.`}
      </p>
      {items && items.length > 0 && (
        <ListTable labelledBy="drifted-title" columns={["Name", "What differs", "Checked"]}>
          {items.map((item) => (
            <tr key={item.collectorId}>
              <th scope="row">
                <Link href={`/ui/collectors/${encodeURIComponent(item.collectorId)}`} className="name">
                  {item.name}
                </Link>
                <code className="id muted">{item.collectorId}</code>
              </th>
              <td className="drift-reason">{item.reason ?? <span className="muted">—</span>}</td>
              <td>
                <LastSeen at={item.checkedAt} />
              </td>
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}
