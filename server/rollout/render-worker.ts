/**
 * The worker side of render-isolated.ts: renders the collectors it is sent
 * with one renderer over the snapshot it was started with, and answers each
 * chunk with the configs not sent yet and, per collector, which config it got
 * or why it has none.
 */
import type { Collector } from "../../shared/collectors.ts";
import type { RenderReply, RenderRequest, RenderedWire, TemplateWire } from "./render-isolated.ts";
import { filledFrom, fleetRenderer, renderedSourceTypes, renderOne, type RenderedConfig } from "./renderer.ts";

declare const self: Worker;

let render: ((collector: Collector) => RenderedConfig) | null = null;
/** Configs sent, by hash (equal hashes are equal bytes): their place in the order sent. */
const sent = new Map<string, number>();
/** Templates sent, by id: their place in the order sent. */
const templatesSent = new Map<string, number>();

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
    const templates: TemplateWire[] = [];
    const results = data.collectors.map((collector) => {
      const one = renderOne(render!, collector);
      if (!("config" in one)) return one;
      let at = sent.get(one.config.hash);
      if (at === undefined) {
        at = sent.size;
        sent.set(one.config.hash, at);
        configs.push({ config: one.config, sourceTypes: renderedSourceTypes(one.config), filled: filledWire(one.config, templates) });
      }
      return at;
    });
    reply({ kind: "rendered", configs, templates, results });
  } catch (error) {
    reply({ kind: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
};

/** What `config` was filled from, its template named by its place in the order sent (sent with this reply when new). */
function filledWire(config: RenderedConfig, templates: TemplateWire[]): RenderedWire["filled"] {
  const filled = filledFrom(config);
  if (!filled) return undefined;
  let at = templatesSent.get(filled.templateId);
  if (at === undefined) {
    at = templatesSent.size;
    templatesSent.set(filled.templateId, at);
    templates.push({ id: filled.templateId, template: filled.template });
  }
  return { template: at, values: filled.values };
}
