/**
 * How rendered configs are stored (issue 36, "store what differs"). A config
 * with attribute references filled in is stored as the values it was filled
 * with and the name of its template, the rendered text cut at the references,
 * stored once per template (`config_templates/<id>`, the id a hash of the
 * text). A fleet whose every collector has its own config then stores one
 * template and 100,000 small rows, not 100,000 bodies of a few KiB. A config
 * without references is stored whole, as before. Either way a config is
 * stored by the hash of its filled bytes, and reading it gives those bytes.
 */
import type { Runtime } from "../../shared/vocabulary.ts";
import { joinTemplate, type TemplateText } from "../render/attributes.ts";
import { SCAN_SLICE_MS, Slices } from "../lib/next-turn.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { RENDERED } from "./records.ts";
import { filledFrom, type RenderedConfig } from "./renderer.ts";

export const TEMPLATES = "config_templates";

/** A filled config's stored row: no body, the template's id and the values. */
interface StoredFilled {
  hash: string;
  runtime: Runtime;
  contentType: string;
  template: string;
  values: Record<string, string>;
}

/** A `rendered_configs` document: a whole config, or a filled one (rows before issue 36 are all whole). */
export type StoredRendered = RenderedConfig | StoredFilled;

/** Whether a stored row holds its body (a filled one is joined from its template on reading). */
export function isWhole(stored: StoredRendered): stored is RenderedConfig {
  return !("template" in stored);
}

/**
 * The writes that store configs a fleetRenderer made by hash: first each
 * template the filled ones need that is not stored yet, then each config,
 * filled ones as their values. A template is stored once (only the secrets
 * upgrade rewrites it; the delivery caches keep it while it stands) and
 * never deleted.
 */
export async function renderedWrites(store: Pick<Store, "getMany">, configs: Iterable<RenderedConfig>): Promise<WriteOp[]> {
  const templates = new Map<string, TemplateText>();
  const rows: WriteOp[] = [];
  // 100,000 configs' rows took a tenth of a second: in slices.
  const slices = new Slices(SCAN_SLICE_MS);
  for (const config of configs) {
    if (slices.due) await slices.turn();
    const filled = filledFrom(config);
    if (!filled) {
      rows.push({ op: "put", collection: RENDERED, id: config.hash, data: config });
      continue;
    }
    templates.set(filled.templateId, filled.template);
    const row: StoredFilled = {
      hash: config.hash,
      runtime: config.runtime,
      contentType: config.contentType,
      template: filled.templateId,
      values: filled.values,
    };
    rows.push({ op: "put", collection: RENDERED, id: config.hash, data: row });
  }
  const stored = templates.size > 0 ? await store.getMany(TEMPLATES, [...templates.keys()]) : new Map();
  const puts: WriteOp[] = [];
  // Guarded: two writers storing one template, one after the secrets upgrade redacted it, must not put its plaintext back
  // (the loser's publish or re-target is tried again, and finds it stored).
  for (const [id, data] of templates) if (!stored.has(id)) puts.push({ op: "put", collection: TEMPLATES, id, data, expect: "absent" });
  return [...puts, ...byHashPrefix(rows)];
}

/**
 * `renderedWrites` of those of `configs` not stored yet, for a write that
 * re-targets a few collectors: rewriting a stored one would make every
 * replica drop it from memory. (A publish stores every config it names
 * without this read: at fleet scale it would read 100,000 documents.)
 */
export async function unstoredWrites(store: Pick<Store, "getMany">, configs: readonly RenderedConfig[]): Promise<WriteOp[]> {
  const stored = await store.getMany(
    RENDERED,
    configs.map((config) => config.hash),
  );
  return renderedWrites(
    store,
    configs.filter((config) => !stored.has(config.hash)),
  );
}

/**
 * `rows` grouped by the first two hex digits of their hash (their id), in
 * one pass. Hashes are random, so rows in the order rendered land all over
 * the store's key index: each row of a 1,000-row slice dirtied an index page
 * of its own, and the commit wrote them all. Grouped, a slice's rows fall in
 * a few hundredths of the key space. A full sort would hold the event loop
 * for a fifth of a second at 100,000 rows.
 */
function byHashPrefix(rows: WriteOp[]): WriteOp[] {
  const groups: WriteOp[][] = Array.from({ length: 256 }, () => []);
  for (const row of rows) groups[Number.parseInt(row.id.slice(0, 2), 16) || 0]!.push(row);
  return groups.flat();
}

/** Reads a template by id. */
export type TemplateSource = (id: string) => Promise<TemplateText | null>;

/** A template straight from the store. */
export const templateFrom =
  (store: Pick<Store, "get">): TemplateSource =>
  async (id) =>
    (await store.get<TemplateText>(TEMPLATES, id))?.data ?? null;

/**
 * The config stored by `hash` (history entries name it), its body filled from
 * its template when it was stored as values; null when none is stored (or its
 * template is gone, which no write leaves: the template is stored first, in
 * the same or an earlier write). As the store holds it now, not from the
 * delivery cache: the secrets upgrade (secrets-upgrade.ts) may since have
 * replaced a plaintext in it by its marker, and what is shown must be the
 * redacted body.
 */
export async function storedRendered(store: Pick<Store, "get">, hash: string, templates: TemplateSource = templateFrom(store)): Promise<RenderedConfig | null> {
  const stored = (await store.get<StoredRendered>(RENDERED, hash))?.data;
  if (!stored) return null;
  if (isWhole(stored)) return stored;
  const template = await templates(stored.template);
  if (!template) return null;
  return { hash: stored.hash, runtime: stored.runtime, contentType: stored.contentType, body: joinTemplate(template, stored.values) };
}
