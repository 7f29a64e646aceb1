/**
 * The collectors that failed their new config, by name, with the message
 * each reported. Long lists show the first hundred, whose names are fetched.
 */
import type { RolloutStatus } from "../../../shared/rollouts.ts";
import { ListTable } from "../components/ListTable.tsx";
import { Link } from "../router.tsx";
import { useCollectorNames } from "./names.ts";

const SHOWN = 100;

export function Failures({ collectors }: { collectors: RolloutStatus["collectors"] }) {
  const failures = collectors.filter((c) => c.state === "failed");
  const shown = failures.slice(0, SHOWN);
  const names = useCollectorNames(shown.map((f) => f.id));
  if (failures.length === 0) return null;
  return (
    <>
      <h3 id="failures-title">Failures</h3>
      <ListTable labelledBy="failures-title" columns={["Collector", "Error"]}>
        {shown.map((f) => (
          <tr key={f.id}>
            <th scope="row">
              <Link href={`/ui/collectors/${encodeURIComponent(f.id)}`}>
                <span className="name">{names.get(f.id) ?? f.id}</span>
              </Link>
              {names.has(f.id) && <code className="id muted">{f.id}</code>}
            </th>
            <td>{f.error ?? <span className="muted">no message</span>}</td>
          </tr>
        ))}
      </ListTable>
      {failures.length > SHOWN && <p className="muted">And {failures.length - SHOWN} more.</p>}
    </>
  );
}
