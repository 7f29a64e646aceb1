/**
 * `svc-server history purge-secrets`: the history without the plaintext that
 * sensitive fields held before secrets were kept apart. Every commit is
 * rewritten with each such value sealed in the vault and named by id (the
 * same value always by the same id, the one the working tree already uses
 * for it when it does, so the rewritten head equals the working tree there
 * and no change appears pending); the old head stays readable under a kept
 * ref until `dropKeptRef` deletes it with every object only it reached.
 * Documents that name a rewritten commit (collector targets, config history,
 * rollouts) are pointed at its new id.
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError } from "../errors.ts";
import { scan } from "../store/scan.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { sealPlaintextInTree, sensitiveValuesInTree, type TreeLeaf } from "./secrets-tree.ts";
import { isSecretRef } from "../../shared/sensitive.ts";
import { MissingSecretError, type SecretVault } from "../secrets/vault.ts";
import type { ConfigStore } from "./configstore.ts";
import { DIRS } from "./layout.ts";
import { KEPT_REFS } from "./repo-backend.ts";
import { OBJECTS, REFS } from "./repo-store.ts";
import type { Rewrite } from "./repo.ts";

/** The working tree still holds plaintext: the server's start moves it to the vault; purge names those ids. */
export class PlaintextInWorktreeError extends Error {}

export interface PurgeOutcome extends Rewrite {
  /** Distinct plaintext values found in the history. */
  values: number;
  /** Of those, how many the working tree did not name, so were sealed anew. */
  sealed: number;
  /** Documents pointed at the new commit ids. */
  remapped: number;
}

/** How many times a purge starts over when a commit lands while it rewrites (external store, other replicas). */
const ATTEMPTS = 3;

/** Files secrets-tree.ts reads: records and collectors' activations. */
const relevant = (path: string) =>
  path.startsWith(DIRS.sources) || path.startsWith(DIRS.destinations) || (path.startsWith(DIRS.collectors) && path.endsWith("/activations.yaml"));

const at = (leaf: Pick<TreeLeaf, "file" | "path">) => JSON.stringify([leaf.file, leaf.path]);

/** `refs/svc/before-purge-20260102T030405Z`. */
export function beforePurgeRef(now: Date): string {
  return `${KEPT_REFS}before-purge-${now.toISOString().replace(/[-:]|\.\d+/g, "")}`;
}

/** Rewrites the history without plaintext secrets; null when it holds none. */
export async function purgeSecrets(config: ConfigStore, store: Store, vault: SecretVault, who: Actor, now = new Date()): Promise<PurgeOutcome | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await purgeOnce(config, store, vault, who, now);
    } catch (error) {
      if (!(error instanceof ConflictError && error.code === "head_moved") || attempt >= ATTEMPTS) throw error;
    }
  }
}

async function purgeOnce(config: ConfigStore, store: Store, vault: SecretVault, who: Actor, now: Date): Promise<PurgeOutcome | null> {
  // The working tree's secrets: by place, and any id for each value.
  const byPlace = new Map<string, { id: string; plaintext: string }>();
  const byValue = new Map<string, string>();
  let plaintext = 0;
  for (const leaf of sensitiveValuesInTree(await config.files())) {
    if (typeof leaf.value === "string") plaintext++;
    if (!isSecretRef(leaf.value)) continue;
    let value: string;
    try {
      value = await vault.open(leaf.value.secret);
    } catch (error) {
      if (error instanceof MissingSecretError) continue; // nothing to match a value against
      throw error;
    }
    byPlace.set(at(leaf), { id: leaf.value.secret, plaintext: value });
    if (!byValue.has(value)) byValue.set(value, leaf.value.secret);
  }
  if (plaintext > 0) {
    throw new PlaintextInWorktreeError(
      `the working tree still holds ${plaintext} plaintext value(s) in sensitive fields: start svc-server once (it moves them into the secret store), then run this again`,
    );
  }

  const found = new Set<string>();
  const sealed = new Map<string, { id: string; op: WriteOp }>();
  const seal = (value: string, where: TreeLeaf): string => {
    found.add(value);
    const here = byPlace.get(at(where));
    if (here?.plaintext === value) return here.id;
    const known = byValue.get(value) ?? sealed.get(value)?.id;
    if (known !== undefined) return known;
    const fresh = vault.seal(value, who, now);
    sealed.set(value, fresh);
    return fresh.id;
  };
  const repo = config.repo;
  const rewrite = await repo.rewrite(
    async (_commit, tree) => {
      const files = new Map<string, string>();
      for (const [path, oid] of tree) if (relevant(path)) files.set(path, await repo.read(oid));
      return sealPlaintextInTree(files, seal);
    },
    {
      keepRef: beforePurgeRef(now),
      // The vault versions the new trees name are stored before the branch names them.
      beforeMove: async () => {
        if (sealed.size > 0) await store.write([...sealed.values()].map((s) => s.op));
      },
      audit: (r) => [purgeAudit(who, r, found.size, sealed.size, now)],
    },
  );
  if (rewrite === null) return null;
  const { audited, ...done } = rewrite;
  if (!audited) await store.write([], [purgeAudit(who, done, found.size, sealed.size, now)]);
  return { ...done, values: found.size, sealed: sealed.size, remapped: await remapCommits(store, done.ids) };
}

function purgeAudit(who: Actor, r: Rewrite, values: number, sealed: number, now: Date) {
  return auditEntry(
    who,
    "config.purge_secrets",
    "commit",
    r.after,
    { before: r.before, keptRef: r.keptRef, commits: r.ids.size, values, sealed },
    "success",
    now,
  );
}

/**
 * Points every document that names a rewritten commit (any string field
 * equal to its id) at the new id. Commit ids are SHA-1s, so only a commit's
 * own id equals one. Idempotent: dropping a kept ref runs it again, for a
 * publish that landed on another replica while the history was rewritten.
 */
export async function remapCommits(store: Store, ids: ReadonlyMap<string, string>): Promise<number> {
  if (ids.size === 0) return 0;
  const remap = (value: unknown): unknown => {
    if (typeof value === "string") return ids.get(value) ?? value;
    if (Array.isArray(value)) return value.map(remap);
    if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, remap(v)]));
    return value;
  };
  let count = 0;
  for (const collection of await store.collections()) {
    if (collection === OBJECTS || collection === REFS) continue;
    for await (const doc of scan(store, collection)) {
      // Guarded by the version read; a document that changed meanwhile is read again.
      for (let current = doc; ; ) {
        const data = remap(current.data);
        if (JSON.stringify(data) === JSON.stringify(current.data)) break;
        try {
          await store.write([{ op: "put", collection, id: current.id, data, expect: current.version }]);
          count++;
          break;
        } catch (error) {
          if (!(error instanceof ConflictError && error.code === "version_conflict")) throw error;
          const again = await store.get(collection, current.id);
          if (again === null) break;
          current = again;
        }
      }
    }
  }
  return count;
}

/**
 * Deletes kept ref `ref` and every object only it reached, audited
 * (`config.drop_ref`), after pointing documents that still name its commits
 * at the commits that replaced them.
 */
export async function dropKeptRef(config: ConfigStore, store: Store, ref: string, who: Actor, now = new Date()) {
  const remapped = await remapCommits(store, await config.repo.rewrittenSince(ref));
  const audit = (commit: string) => [auditEntry(who, "config.drop_ref", "commit", commit, { ref }, "success", now)];
  const { commit, deleted, audited } = await config.repo.dropRef(ref, audit);
  if (!audited) await store.write([], audit(commit));
  return { commit, objects: deleted, remapped };
}
