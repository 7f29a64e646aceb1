/**
 * What a publish would do, as the plan says it: a summary sentence, each
 * distinct change with its collectors and diff, the collectors whose config
 * cannot be rendered (with why), those whose build lacks a component, the
 * Alloy collectors whose sources deliver other data than the OpenTelemetry Collector's (the
 * parity table's differences), and those a rollback pinned.
 */
import type { PublishPlan } from "../../../shared/rollouts.ts";
import { shortCommit } from "../format.ts";
import { LastSeen } from "../components/LastSeen.tsx";
import { CollectorLink } from "./CollectorLink.tsx";
import { PlanGroup } from "./PlanGroup.tsx";
import { planSummary } from "./plan.ts";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

export function PlanView({ plan }: { plan: PublishPlan }) {
  const names = new Map(plan.changes.map((c) => [c.collectorId, c.name]));
  return (
    <div className="plan">
      <p className="plan-summary">
        Commit <code>{shortCommit(plan.commit)}</code>: {planSummary(plan)}
      </p>
      {plan.groups.length > 0 && (
        <ol className="plain plan-groups" aria-label="Changes">
          {plan.groups.map((group, i) => (
            <PlanGroup key={i} index={i} diff={group.diff} collectorIds={group.collectorIds} names={names} />
          ))}
        </ol>
      )}
      {plan.errors.length > 0 && (
        <section className="plan-errors" aria-labelledby="plan-errors-title">
          <h4 id="plan-errors-title">Cannot be rendered</h4>
          <ul>
            {plan.errors.map((e) => (
              <li key={e.collectorId}>
                <CollectorLink id={e.collectorId} name={e.name} />: {e.message}
                {e.path && (
                  <>
                    {" "}
                    <code className="muted">{e.path}</code>
                  </>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      {plan.lacking.length > 0 && (
        <section className="plan-errors" aria-labelledby="plan-lacking-title">
          <h4 id="plan-lacking-title">Build lacks components, skipped</h4>
          <p className="hint">Their supervisor reports a collector build without these component types: they keep the config they run.</p>
          <ul>
            {plan.lacking.map((l) => (
              <li key={l.collectorId}>
                <CollectorLink id={l.collectorId} name={l.name} />: no{" "}
                {l.missing.map((m, i) => (
                  <span key={m}>
                    {i > 0 && ", "}
                    <code>{m}</code>
                  </span>
                ))}
              </li>
            ))}
          </ul>
        </section>
      )}
      {plan.differences.length > 0 && (
        <section className="plan-errors" aria-labelledby="plan-differences-title">
          <h4 id="plan-differences-title">Other data on Alloy</h4>
          <p className="hint">
            These Alloy collectors would deliver data unlike the {RUNTIME_NAMES.otelcol}'s for the same input; svc cannot make it equal
            (docs/runtime-parity.md).
          </p>
          <ul>
            {plan.differences.map((d) => (
              <li key={d.sourceType}>
                <code>{d.sourceType}</code>: {d.difference}. On{" "}
                {d.collectorIds.map((id, i) => (
                  <span key={id}>
                    {i > 0 && ", "}
                    <CollectorLink id={id} name={names.get(id) ?? id} />
                  </span>
                ))}
              </li>
            ))}
          </ul>
        </section>
      )}
      {plan.pinned.length > 0 && (
        <section aria-labelledby="plan-pinned-title">
          <h4 id="plan-pinned-title">Pinned, skipped</h4>
          <p className="hint">A rollback pinned these to their config; publishing to one of them by name (below) includes it.</p>
          <ul>
            {plan.pinned.map((p) => (
              <li key={p.collectorId}>
                <CollectorLink id={p.collectorId} name={p.name} /> <span className="muted">pinned by {p.by}</span> <LastSeen at={p.since} />
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
