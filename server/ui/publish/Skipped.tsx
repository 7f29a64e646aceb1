/**
 * The collectors a rollout left on their config because theirs could not be
 * rendered, by name, each with the reason (one collector never holds back
 * the rest). Long lists show the first hundred.
 */
import type { RolloutStatus } from "../../../shared/rollouts.ts";
import { ListTable } from "../components/ListTable.tsx";
import { CollectorLink } from "./CollectorLink.tsx";

const SHOWN = 100;

export function Skipped({ skipped }: { skipped: RolloutStatus["skipped"] }) {
  if (skipped.length === 0) return null;
  return (
    <>
      <h3 id="skipped-title">Skipped</h3>
      <ListTable labelledBy="skipped-title" columns={["Collector", "Why"]}>
        {skipped.slice(0, SHOWN).map((s) => (
          <tr key={s.collectorId}>
            <th scope="row">
              <CollectorLink id={s.collectorId} name={s.name} />
            </th>
            <td>
              {s.message}
              {s.path && (
                <>
                  {" "}
                  <code className="muted">{s.path}</code>
                </>
              )}
            </td>
          </tr>
        ))}
      </ListTable>
      {skipped.length > SHOWN && <p className="muted">And {skipped.length - SHOWN} more.</p>}
    </>
  );
}
