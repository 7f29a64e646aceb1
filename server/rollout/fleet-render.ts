/**
 * The render step publish, attribute changes and their plans share: every
 * affected collector rendered at one commit, sorted into those a rollback pinned (left alone
 * unless the publish names them), those whose config cannot be rendered (the
 * render's first detail says why: the reason it is skipped), and the rest
 * with their rendered config.
 * A fleet takes seconds, so other requests get a turn every RENDER_SLICE_MS.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { SkippedCollector } from "../../shared/rollouts.ts";
import type { TrustedKeys } from "../../shared/collector-attributes.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { Slices } from "../lib/next-turn.ts";
import { renderIsolated } from "./render-isolated.ts";
import { fleetRenderer, renderOne, type RenderedConfig, type RenderedOne, type RenderProblem } from "./renderer.ts";

/**
 * Longest the render holds the event loop before others get a turn. It was
 * 1,000 collectors, which with attribute references took a few hundred ms:
 * every query that came meanwhile waited that long.
 */
const RENDER_SLICE_MS = 10;

/**
 * Collectors to render from which a render goes to another thread. A worker starts in about a
 * tenth of a second; 2,000 collectors with attribute references render in about that long here.
 */
const ISOLATE_FROM = 2_000;

export interface FleetRender {
  rendered: { collector: Collector; config: RenderedConfig }[];
  pinned: Collector[];
  failed: ({ collector: Collector } & RenderProblem)[];
}

/** `render`: one commit's renderer (renderer.ts fleetRenderer). */
export async function renderFleet(
  render: (collector: Collector) => RenderedConfig,
  affected: readonly Collector[],
  isPinned: (collectorId: string) => boolean,
  named: ReadonlySet<string>,
): Promise<FleetRender> {
  const out: FleetRender = { rendered: [], pinned: [], failed: [] };
  const leftPinned = leftAsPinned(isPinned, named);
  const slices = new Slices(RENDER_SLICE_MS);
  for (const collector of affected) {
    if (slices.due) await slices.turn();
    if (leftPinned(collector)) out.pinned.push(collector);
    else sortInto(out, collector, renderOne(render, collector));
  }
  return out;
}

/** A rollback pinned it, and the publish does not name it: it keeps what it runs. */
function leftAsPinned(isPinned: (collectorId: string) => boolean, named: ReadonlySet<string>): (collector: Collector) => boolean {
  return (collector) => isPinned(collector.id) && !named.has(collector.id);
}

function sortInto(out: FleetRender, collector: Collector, one: RenderedOne): void {
  if ("config" in one) out.rendered.push({ collector, config: one.config });
  else out.failed.push({ collector, ...one });
}

/**
 * `renderFleet` with one commit's renderer (renderer.ts fleetRenderer over `snapshot`). A fleet of
 * `isolateFrom` collectors or more to render is rendered on another thread (render-isolated.ts), so
 * the render's seconds at fleet scale leave the event loop; a smaller one is rendered here, where it
 * takes less than the worker's start.
 */
export async function renderFleetAt(
  snapshot: Snapshot,
  trusted: () => TrustedKeys,
  affected: readonly Collector[],
  isPinned: (collectorId: string) => boolean,
  named: ReadonlySet<string>,
  isolateFrom = ISOLATE_FROM,
): Promise<FleetRender> {
  const leftPinned = leftAsPinned(isPinned, named);
  const toRender = affected.filter((collector) => !leftPinned(collector));
  if (toRender.length < isolateFrom) return renderFleet(fleetRenderer(snapshot, trusted), affected, isPinned, named);
  const results = await renderIsolated(snapshot, trusted(), toRender);
  const out: FleetRender = { rendered: [], pinned: affected.filter(leftPinned), failed: [] };
  toRender.forEach((collector, i) => sortInto(out, collector, results[i]!));
  return out;
}

/** The collectors whose config cannot be rendered, each with its reason, as a plan and a rollout list them. */
export function skippedOf(fleet: Pick<FleetRender, "failed">): SkippedCollector[] {
  return fleet.failed.map(({ collector, path, message }) => ({ collectorId: collector.id, name: collector.name, path, message }));
}

/** Several renders (one per commit) as one, each list in collector id order. */
export function mergeRenders(renders: readonly FleetRender[]): FleetRender {
  const byId = <T>(items: T[], id: (item: T) => string) => items.sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0));
  return {
    rendered: byId(
      renders.flatMap((r) => r.rendered),
      (r) => r.collector.id,
    ),
    pinned: byId(
      renders.flatMap((r) => r.pinned),
      (c) => c.id,
    ),
    failed: byId(
      renders.flatMap((r) => r.failed),
      (f) => f.collector.id,
    ),
  };
}
