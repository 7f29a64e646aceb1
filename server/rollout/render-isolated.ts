/**
 * A fleet's render on another thread (issue 36, "use both cores"): with every
 * collector's config its own, rendering 100,000 collectors (matching, filling
 * in attribute references, hashing) took seconds of the event loop that polls,
 * pushes and API calls wait behind. The worker (render-worker.ts) runs the same
 * renderer over the same snapshot; collectors go to it and configs come back in
 * chunks, each distinct config once, so receiving them costs the event loop
 * about a tenth of a second at that scale (BENCHMARKS.md, issue 36 third pass).
 * One worker per render, ended with it: its heap goes with it.
 *
 * Run from source, the worker sits beside this module; in the compiled server
 * it is another entry point of the build (package.json, scripts/package.sh,
 * the server image), stored under the bundle's root as `rollout/render-worker.ts`.
 */
import type { TrustedKeys } from "../../shared/collector-attributes.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { SCAN_SLICE_MS, Slices } from "../lib/next-turn.ts";
import type { TemplateText } from "../render/attributes.ts";
import { keepFilledFrom, keepSourceTypes, type FilledFrom, type RenderedConfig, type RenderedOne, type RenderProblem } from "./renderer.ts";

export type RenderRequest = { kind: "start"; snapshot: Snapshot; trusted: TrustedKeys } | { kind: "collectors"; collectors: Collector[] } | { kind: "end" };

/** A config the worker rendered, sent once: later collectors with the same bytes name it by its place in the order sent. */
export interface RenderedWire {
  config: RenderedConfig;
  sourceTypes: readonly string[];
  /** The template it was filled from, by its place in the order sent, and the values; absent when it has no attribute references. */
  filled?: { template: number; values: Record<string, string> };
}

/** A template the worker filled configs from, sent once. */
export interface TemplateWire {
  id: string;
  template: TemplateText;
}

export type RenderReply =
  | { kind: "rendered"; configs: RenderedWire[]; templates: TemplateWire[]; results: (number | RenderProblem)[] }
  | { kind: "done" }
  | { kind: "failed"; message: string };

/** Collectors per message to the worker: a few milliseconds of copying each, with a turn between. */
const CHUNK = 2_000;

const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? new URL("./rollout/render-worker.ts", import.meta.url)
  : new URL("./render-worker.ts", import.meta.url);

/** `collectors` rendered by fleetRenderer(snapshot, () => trusted) on a worker, in order: each its config or why it has none. */
export function renderIsolated(snapshot: Snapshot, trusted: TrustedKeys, collectors: readonly Collector[]): Promise<RenderedOne[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL);
    const configs: RenderedConfig[] = [];
    const templates: Pick<FilledFrom, "templateId" | "template">[] = [];
    const results: RenderedOne[] = [];
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      worker.onmessage = null;
      worker.onerror = null;
      worker.terminate();
      settle();
    };
    worker.onmessage = ({ data }: MessageEvent<RenderReply>) => {
      if (data.kind === "failed") return finish(() => reject(new Error(`The render worker failed: ${data.message}`)));
      if (data.kind === "done") return finish(() => resolve(results));
      for (const { id, template } of data.templates) templates.push({ templateId: id, template });
      for (const { config, sourceTypes, filled } of data.configs) {
        keepSourceTypes(config, sourceTypes);
        if (filled) keepFilledFrom(config, { ...templates[filled.template]!, values: filled.values });
        configs.push(config);
      }
      for (const result of data.results) results.push(typeof result === "number" ? { config: configs[result]! } : result);
    };
    worker.onerror = (event) => finish(() => reject(new Error(`The render worker failed: ${event.message}`)));
    const post = (request: RenderRequest) => worker.postMessage(request);
    void (async () => {
      post({ kind: "start", snapshot, trusted });
      const slices = new Slices(SCAN_SLICE_MS);
      for (let i = 0; i < collectors.length && !settled; i += CHUNK) {
        post({ kind: "collectors", collectors: collectors.slice(i, i + CHUNK) });
        if (slices.due) await slices.turn();
      }
      post({ kind: "end" });
    })().catch((error: unknown) => finish(() => reject(error)));
  });
}
