/**
 * One way the fleet changes: how many collectors share this exact diff, the
 * first few of them by name, and the diff of their rendered config.
 */
import { useMemo } from "react";
import { parsePatch } from "diff";
import { Diff } from "../components/Diff.tsx";
import { CollectorLink } from "./CollectorLink.tsx";
import { plural } from "./plan.ts";

/** Names shown per group; the rest are counted. */
const NAMED = 5;

interface Props {
  index: number;
  diff: string;
  collectorIds: string[];
  names: ReadonlyMap<string, string>;
}

export function PlanGroup({ index, diff, collectorIds, names }: Props) {
  // The server sends one file's patch per group ("current" → "published").
  const patch = useMemo(() => parsePatch(diff)[0], [diff]);
  const headingId = `plan-group-${index}`;
  const rest = collectorIds.length - NAMED;
  return (
    <li className="plan-group" aria-labelledby={headingId}>
      <h4 id={headingId}>
        Change {index + 1}: {plural(collectorIds.length, "collector")}
      </h4>
      <p className="plan-names">
        {collectorIds.slice(0, NAMED).map((id, i) => (
          <span key={id}>
            {i > 0 && ", "}
            <CollectorLink id={id} name={names.get(id)} />
          </span>
        ))}
        {rest > 0 && <span className="muted"> and {rest} more</span>}
      </p>
      {patch ? <Diff patch={patch} label={`Diff of change ${index + 1}`} /> : <p className="muted">No diff.</p>}
    </li>
  );
}
