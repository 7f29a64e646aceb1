/**
 * A collector that reports over OpAMP but cannot take remote config (no
 * AcceptsRemoteConfig: run from its own file, without the supervisor). It is
 * never sent config and rollouts count it apart, so the UI says so beside its
 * status, with the fix.
 */
import type { Collector } from "../../../shared/collectors.ts";
import "./ReportingOnly.css";

export const REPORTING_ONLY = "reporting only — cannot accept remote config";
export const REPORTING_ONLY_FIX = "run it under the OpAMP supervisor";

export function isReportingOnly(collector: Collector): boolean {
  return collector.health?.acceptsRemoteConfig === false;
}

/** One line for lists (the fix in its tooltip); the whole sentence with the fix where there is room. */
export function ReportingOnlyNote({ full = false }: { full?: boolean }) {
  if (!full) {
    return (
      <span className="reporting-only" title={`Config is never sent to it: ${REPORTING_ONLY_FIX}.`}>
        {REPORTING_ONLY}
      </span>
    );
  }
  return (
    <p className="reporting-only notice" role="note">
      <strong>{REPORTING_ONLY}.</strong> It connected without the AcceptsRemoteConfig capability (a collector started from its own config file), so no published
      config reaches it and rollouts count it apart. To manage its config, {REPORTING_ONLY_FIX}.
    </p>
  );
}
