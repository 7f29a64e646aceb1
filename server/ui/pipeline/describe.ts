/**
 * What the editor offers and how it names things: the palette's items (the
 * pipeline's signal decides which catalog types and records fit) and a
 * node's human label, shared by the canvas, the node list and the chain.
 */
import { initialValue, type Schema } from "../schema/schema.ts";
import { filterConditions } from "./graph.ts";
import type { EditorContext, NodeKind, PaletteItem, ProcessorTemplate, TopologyNode } from "./types.ts";

export const KIND_LABELS: Record<NodeKind, string> = { source: "Source", processor: "Processor", destination: "Destination" };

/** A new processor's config: the schema's defaults (a filter's conditions are typed in the chain); the API names what is still missing. */
function emptyConfig(entry: EditorContext["catalog"]["processors"][number]): Record<string, unknown> {
  return entry.type === "filter" ? { error_mode: "ignore" } : initialValue(entry.schema as Schema);
}

/** A filter template is written for one signal: it applies when it has conditions for this pipeline's. */
export function templatesFor(ctx: EditorContext): ProcessorTemplate[] {
  return ctx.templates.filter((t) => t.processor.type !== "filter" || filterConditions(t.processor.config, ctx.signal).length > 0);
}

export function paletteItems(ctx: EditorContext): Record<NodeKind, PaletteItem[]> {
  const carries = (types: EditorContext["catalog"]["sources"], type: string) => types.find((t) => t.type === type)?.signals.includes(ctx.signal) ?? false;
  const sources: PaletteItem[] = [
    ...ctx.sources
      .filter((s) => carries(ctx.catalog.sources, s.type))
      .map((s) => ({ key: `source:${s.id}`, label: s.name, description: `${s.type} source`, node: { kind: "source" as const, ref: s.id }, idBase: s.name })),
    { key: "source:any", label: "Any source", description: "whatever source a route attaches", node: { kind: "source" }, idBase: "source" },
  ];
  const processors: PaletteItem[] = [
    ...ctx.catalog.processors
      .filter((p) => p.signals.includes(ctx.signal))
      .map((p) => ({
        key: `processor:${p.type}`,
        label: p.title,
        description: p.description,
        node: { kind: "processor" as const, processor: { type: p.type, config: emptyConfig(p) } },
        idBase: p.type,
      })),
    ...templatesFor(ctx).map((t) => ({
      key: `template:${t.id}`,
      label: t.name,
      description: t.description,
      node: { kind: "processor" as const, processor: structuredClone(t.processor) },
      idBase: t.id,
    })),
  ];
  const destinations: PaletteItem[] = [
    ...ctx.destinations
      .filter((d) => carries(ctx.catalog.destinations, d.type))
      .map((d) => ({
        key: `destination:${d.id}`,
        label: d.name,
        description: `${d.type} destination`,
        node: { kind: "destination" as const, ref: d.id },
        idBase: d.name,
      })),
    {
      key: "destination:every",
      label: "Every active destination",
      description: "each destination active on the collector",
      node: { kind: "destination" },
      idBase: "destination",
    },
  ];
  return { source: sources, processor: processors, destination: destinations };
}

/** The node's title: the record it names, the processor's type title, or what an unnamed end stands for. */
export function nodeTitle(node: TopologyNode, ctx: EditorContext): string {
  if (node.kind === "processor") {
    const type = node.processor?.type ?? "processor";
    return ctx.catalog.processors.find((p) => p.type === type)?.title ?? type;
  }
  const records = node.kind === "source" ? ctx.sources : ctx.destinations;
  if (node.ref === undefined) return node.kind === "source" ? "Any source" : "Every active destination";
  return records.find((r) => r.id === node.ref)?.name ?? `missing ${node.kind} ${node.ref}`;
}

/** A short second line: the filter's condition count, or the record's type. */
export function nodeDetail(node: TopologyNode, ctx: EditorContext): string {
  if (node.kind === "processor") {
    if (node.processor?.type !== "filter") return node.processor?.type ?? "";
    const count = filterConditions(node.processor.config ?? {}, ctx.signal).length;
    return `${count} condition${count === 1 ? "" : "s"}`;
  }
  if (node.ref === undefined) return node.kind === "source" ? "from the route" : "on the collector";
  const records = node.kind === "source" ? ctx.sources : ctx.destinations;
  return records.find((r) => r.id === node.ref)?.type ?? "";
}

/** The name the canvas, the list and the tests use for a node: "Filter (filter-1)". */
export function nodeName(node: TopologyNode, ctx: EditorContext): string {
  return `${nodeTitle(node, ctx)} (${node.id})`;
}
