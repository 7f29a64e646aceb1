/**
 * The start-up upgrade of a store written before secrets were kept apart:
 * plaintext found in sensitive fields of the working tree moves to the vault
 * (the tree names each value's version instead), and the stored copies of
 * what collectors were sent and reported back lose those plaintexts too, in
 * one audited write. Commits already made keep theirs until
 * `svc-server history purge-secrets` rewrites them.
 */
import type { Logger } from "pino";
import { auditEntry, SYSTEM_ACTOR } from "../audit/audit.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import { paths } from "../configstore/layout.ts";
import { deliverable, quotedSecret } from "../render/secrets.ts";
import { EFFECTIVE, RENDERED, type EffectiveConfig } from "./records.ts";
import type { RenderedConfig } from "./renderer.ts";
import { isWhole, TEMPLATES, type StoredRendered } from "./stored-rendered.ts";
import type { TemplateText } from "../render/attributes.ts";
import { scan } from "../store/scan.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { plaintextRedactor } from "../render/redact.ts";
import { sealPlaintextInTree } from "../configstore/secrets-tree.ts";
import { secretMarker } from "../secrets/values.ts";
import type { SecretVault } from "../secrets/vault.ts";

/** What the upgrade moved: counts only. */
export interface SecretsUpgrade {
  /** Distinct plaintexts sealed. */
  secrets: number;
  /** Working-tree files rewritten. */
  files: number;
  renderedConfigs: number;
  /** Templates of filled-in configs (stored-rendered.ts). */
  configTemplates: number;
  effectiveConfigs: number;
}

/** Plaintext → the id of the version it was sealed as. */
export type SealedPlaintexts = ReadonlyMap<string, string>;

/**
 * A rendered body with each plaintext, quoted as the runtime's writer quoted
 * it, replaced by its quoted marker. Delivery puts the same quoting back, so
 * the bytes a collector is sent, and the hash it knows them by, stay as they
 * were: null when a body would not come back identical (it is then left).
 */
export async function redactRendered(rendered: Pick<RenderedConfig, "runtime" | "body">, sealed: SealedPlaintexts): Promise<string | null> {
  let body = rendered.body;
  for (const [plaintext, id] of sealed) body = body.replaceAll(quotedSecret(rendered.runtime, plaintext), `"${secretMarker(id)}"`);
  if (body === rendered.body) return null;
  const plaintexts = new Map([...sealed].map(([plaintext, id]) => [id, plaintext]));
  const delivered = await deliverable(rendered.runtime, body, async (id) => plaintexts.get(id) ?? "");
  return delivered === rendered.body ? body : null;
}

/**
 * Moves plaintext in the working tree's sensitive fields to the vault and
 * redacts the rendered and effective configs holding it, in one write with a
 * `secrets.migrate` audit entry (counts only); null when there is none. Safe
 * to run on every start and on replicas at once: a write that loses to
 * another is redone on what won.
 */
export async function upgradeSecrets(deps: { store: Store; configStore: ConfigStore; vault: SecretVault; logger: Logger }): Promise<SecretsUpgrade | null> {
  const { store, configStore, vault } = deps;
  const upgrade = await configStore.guarded(async (tree) => {
    const { sources, destinations, activations } = tree.snapshot;
    const files = new Map<string, string>();
    for (const path of [
      ...[...sources.keys()].map(paths.source),
      ...[...destinations.keys()].map(paths.destination),
      ...[...activations.keys()].map(paths.activations),
    ]) {
      files.set(path, tree.keep(path).text!);
    }
    // One version per distinct plaintext, so equal values stay equal in the tree.
    const sealed = new Map<string, string>();
    const ops: WriteOp[] = [];
    const rewritten = sealPlaintextInTree(files, (plaintext) => {
      let id = sealed.get(plaintext);
      if (id === undefined) {
        const version = vault.seal(plaintext, SYSTEM_ACTOR);
        ops.push(version.op);
        sealed.set(plaintext, (id = version.id));
      }
      return id;
    });
    if (rewritten.size === 0) return null;

    let renderedConfigs = 0;
    for await (const doc of scan<StoredRendered>(store, RENDERED)) {
      // A filled-in config is stored as values (never a secret, render/attributes.ts) and its template, redacted below.
      if (!isWhole(doc.data)) continue;
      const body = await redactRendered(doc.data, sealed);
      if (body === null) continue;
      ops.push({ op: "put", collection: RENDERED, id: doc.id, data: { ...doc.data, body } satisfies RenderedConfig, expect: doc.version });
      renderedConfigs++;
    }
    let configTemplates = 0;
    for await (const doc of scan<TemplateText>(store, TEMPLATES)) {
      // A secret is a whole string, never cut by a reference: each piece is redacted on its own.
      const { runtime, pieces } = doc.data;
      const redacted = await Promise.all(pieces.map(async (body) => (await redactRendered({ runtime, body }, sealed)) ?? body));
      if (redacted.every((piece, i) => piece === pieces[i])) continue;
      ops.push({ op: "put", collection: TEMPLATES, id: doc.id, data: { ...doc.data, pieces: redacted } satisfies TemplateText, expect: doc.version });
      configTemplates++;
    }
    let effectiveConfigs = 0;
    const redact = plaintextRedactor(sealed);
    for await (const doc of scan<EffectiveConfig>(store, EFFECTIVE)) {
      const files = doc.data.files.map((file) => ({ ...file, body: redact(file.body) }));
      if (files.every((file, i) => file.body === doc.data.files[i]!.body)) continue;
      ops.push({ op: "put", collection: EFFECTIVE, id: doc.id, data: { ...doc.data, files } satisfies EffectiveConfig, expect: doc.version });
      effectiveConfigs++;
    }

    const counts: SecretsUpgrade = { secrets: sealed.size, files: rewritten.size, renderedConfigs, configTemplates, effectiveConfigs };
    await configStore.edit(
      [...rewritten].map(([path, text]) => ({ path, text, expect: tree.version(path)! })),
      [auditEntry(SYSTEM_ACTOR, "secrets.migrate", "worktree", null, { ...counts })],
      ops,
    );
    return counts;
  }, true);
  if (upgrade) {
    deps.logger.warn(
      upgrade,
      "moved plaintext secrets found in the working tree to the vault: commit the working tree so the next commit holds references only, " +
        "and run `svc-server history purge-secrets` to rewrite the older commits that still hold the plaintexts",
    );
  }
  return upgrade;
}
