/**
 * The render step publish and its plan share: every affected collector
 * rendered at one snapshot, sorted into those a rollback pinned (left alone
 * unless the publish names them), those whose config cannot be rendered (the
 * render's first detail says why), and the rest with their rendered config.
 * A fleet takes seconds, so other requests get a turn every RENDER_SLICE.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { AppError } from "../errors.ts";
import { fleetRenderer, type RenderedConfig } from "./renderer.ts";
import type { TrustedKeys } from "../collectors/attributes.ts";
import { nextTurn } from "../lib/next-turn.ts";

/** Collectors rendered between turns of the event loop. */
const RENDER_SLICE = 1000;


export interface FleetRender {
  rendered: { collector: Collector; config: RenderedConfig }[];
  pinned: Collector[];
  failed: { collector: Collector; path: string | null; message: string }[];
}

export async function renderFleet(
  snapshot: Snapshot,
  affected: readonly Collector[],
  isPinned: (collectorId: string) => boolean,
  named: ReadonlySet<string>,
  trusted: () => TrustedKeys,
): Promise<FleetRender> {
  const render = fleetRenderer(snapshot, trusted);
  const out: FleetRender = { rendered: [], pinned: [], failed: [] };
  for (const [i, collector] of affected.entries()) {
    if (i > 0 && i % RENDER_SLICE === 0) await nextTurn();
    if (isPinned(collector.id) && !named.has(collector.id)) {
      out.pinned.push(collector);
      continue;
    }
    try {
      out.rendered.push({ collector, config: render(collector) });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const detail = error.details[0];
      out.failed.push({ collector, path: detail?.path ?? null, message: detail?.message ?? error.message });
    }
  }
  return out;
}
