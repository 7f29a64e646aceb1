/**
 * Whether the collector runs what it was sent: the server compares its
 * reported effective config with its target in what runs (not formatting)
 * and keeps the answer on the target. Drifted shows the differing paths and
 * the diff (target → what it runs); a comparison that could not be made
 * says why rather than passing for "in sync".
 */
import { parsePatch } from "diff";
import { Diff } from "../components/Diff.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import type { EffectiveConfig } from "./types.ts";
import { StatusBadge } from "../components/StatusBadge.tsx";

type Target = NonNullable<EffectiveConfig["target"]>;

export function DriftNote({ target }: { target: Target }) {
  const drift = target.drift;
  // Not compared with this target yet (a check of an earlier target says nothing about this one).
  if (!drift || drift.targetHash !== target.hash) return null;
  const checked = (
    <span className="muted">
      {" "}
      (checked <LastSeen at={drift.checkedAt} />)
    </span>
  );
  if (!drift.drifted) {
    return (
      <p className="target-note" role="group" aria-label="Drift status">
        {drift.reason ? <>Drift unknown: {drift.reason}.</> : <>In sync: the collector runs its target.</>}
        {checked}
      </p>
    );
  }
  const patch = drift.diff ? parsePatch(drift.diff)[0] : undefined;
  return (
    <div className="target-note target-note-failed" role="group" aria-label="Drift status">
      <p>
        <StatusBadge status="drifted" label="Drifted" symbol="▲" />: the collector runs something other than its target
        {drift.reason ? <> ({drift.reason})</> : null}.{checked}
      </p>
      {patch && <Diff patch={patch} label="Drift: target against what the collector runs" />}
    </div>
  );
}
