/**
 * The publish plan: what a publish of the head commit (or an attribute
 * change, attribute-rollout.ts) would change, before it does. Each affected
 * collector is rendered exactly as the write renders it (fleet-render.ts) and
 * compared with its current target; a change carries the
 * unified diff of the two rendered configs (secrets stay their markers, see
 * render/secrets.ts), and equal diffs are grouped, so a fleet that changes in
 * a few ways reads as a few groups however many collectors it holds.
 */
import { createTwoFilesPatch } from "diff";
import type { PublishPlan } from "../../shared/rollouts.ts";
import { componentsKey, renderedSourceTypes, type RenderedConfig } from "./renderer.ts";
import { runtimeDifferences } from "../render/differences.ts";
import { skippedOf, type FleetRender } from "./fleet-render.ts";
import { lackingChecker, type Build } from "../collectors/builds.ts";

/** A collector's current target, as the plan compares it. */
export interface PlannedTarget {
  targetHash: string;
  targetCommit: string;
  pinned?: { at: string; actor: string };
}

export interface PlanInput {
  commit: string;
  /** The affected collectors as the write would render them, in id order. */
  fleet: FleetRender;
  targets: ReadonlyMap<string, PlannedTarget>;
  /** A stored rendered config by hash (the current targets' bodies). */
  rendered: (hash: string) => Promise<RenderedConfig | null>;
  /** The builds collectors reported (available components), by collector id; absent, none is checked (an attribute rollout's plan). */
  builds?: ReadonlyMap<string, Pick<Build, "components">>;
}

/** The unified diff from one rendered body to another, named so that equal changes give equal text. */
function configDiff(from: string, to: string): string {
  return createTwoFilesPatch("current", "published", from, to, undefined, undefined, { context: 3 }).replace(/^=+\n/, "");
}

export async function publishPlan(input: PlanInput): Promise<PublishPlan> {
  const { fleet } = input;
  const plan: PublishPlan = {
    commit: input.commit,
    changes: [],
    groups: [],
    unchanged: 0,
    pinned: fleet.pinned.map((c) => ({
      collectorId: c.id,
      name: c.name,
      since: input.targets.get(c.id)!.pinned!.at,
      by: input.targets.get(c.id)!.pinned!.actor,
    })),
    errors: skippedOf(fleet),
    lacking: [],
    differences: [],
  };
  /** One diff per (from, to) pair of hashes, then one group per distinct diff text. */
  const diffOf = new Map<string, string>();
  const lacks = lackingChecker();
  const groupOf = new Map<string, number>();
  for (const { collector, config: next } of fleet.rendered) {
    const current = input.targets.get(collector.id);
    if (current?.targetHash === next.hash) {
      plan.unchanged++;
      continue;
    }
    const build = input.builds?.get(collector.id);
    const missing = build && next.runtime === "otelcol" ? lacks(componentsKey(next), next.body, build) : [];
    if (missing.length > 0) {
      plan.lacking.push({ collectorId: collector.id, name: collector.name, missing });
      continue;
    }
    const pair = `${current?.targetHash ?? ""} ${next.hash}`;
    let diff = diffOf.get(pair);
    if (diff === undefined) {
      const before = current ? ((await input.rendered(current.targetHash))?.body ?? "") : "";
      diff = configDiff(before, next.body);
      diffOf.set(pair, diff);
    }
    let group = groupOf.get(diff);
    if (group === undefined) {
      group = plan.groups.length;
      groupOf.set(diff, group);
      plan.groups.push({ diff, collectorIds: [] });
    }
    plan.groups[group]!.collectorIds.push(collector.id);
    for (const { sourceType, difference } of runtimeDifferences(next.runtime, renderedSourceTypes(next))) {
      let warning = plan.differences.find((d) => d.sourceType === sourceType);
      if (warning === undefined) plan.differences.push((warning = { sourceType, difference, collectorIds: [] }));
      warning.collectorIds.push(collector.id);
    }
    plan.changes.push({
      collectorId: collector.id,
      name: collector.name,
      from: current ? { hash: current.targetHash, commit: current.targetCommit } : null,
      to: { hash: next.hash },
      group,
    });
  }
  plan.differences.sort((a, b) => (a.sourceType < b.sourceType ? -1 : 1));
  return plan;
}
