/**
 * The worker side of render-isolated.ts: renders the collectors it is sent
 * with one renderer over the snapshot it was started with, and answers each
 * chunk with the configs not sent yet and, per collector, which config it got
 * or why it has none.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { RenderReply, RenderRequest, RenderedWire } from "./render-isolated.ts";
import { fleetRenderer, renderedSourceTypes, renderOne, type RenderedConfig } from "./renderer.ts";

declare const self: Worker;

let render: ((collector: Collector) => RenderedConfig) | null = null;
/** Configs sent, by hash (equal hashes are equal bytes): their place in the order sent. */
const sent = new Map<string, number>();

const reply = (message: RenderReply) => self.postMessage(message);

self.onmessage = ({ data }: MessageEvent<RenderRequest>) => {
  try {
    if (data.kind === "start") {
      const { trusted } = data;
      render = fleetRenderer(data.snapshot, () => trusted);
      return;
    }
    if (data.kind === "end") return reply({ kind: "done" });
    const configs: RenderedWire[] = [];
    const results = data.collectors.map((collector) => {
      const one = renderOne(render!, collector);
      if (!("config" in one)) return one;
      let at = sent.get(one.config.hash);
      if (at === undefined) {
        at = sent.size;
        sent.set(one.config.hash, at);
        configs.push({ config: one.config, sourceTypes: renderedSourceTypes(one.config) });
      }
      return at;
    });
    reply({ kind: "rendered", configs, results });
  } catch (error) {
    reply({ kind: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
};
