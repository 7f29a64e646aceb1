/**
 * The external mode's history: git objects and the branch ref as documents of
 * the shared Store, so every replica serves the same history and losing a
 * replica's disk loses nothing. An object is the document `git_objects/<oid>`
 * holding exactly the bytes git writes to objects/xx/yyyy (zlib-deflated
 * loose object), base64; the branch is `git_refs/refs/heads/main` = `{ oid }`.
 * A commit buffers its new objects in memory and writes them together with the
 * ref move in one Store batch, the ref guarded by compare-and-swap: two
 * replicas committing at once get one success and one 409 head_moved, and a
 * failed commit leaves nothing behind. Kept refs (refs/svc/…) are documents of
 * `git_refs` too.
 */
import type { PromiseFsClient } from "isomorphic-git";
import { ConflictError } from "../errors.ts";
import { BoundedMap } from "../lib/bounded-map.ts";
import type { AuditEntry, Store, WriteOp } from "../store/store.ts";
import { scan } from "../store/scan.ts";
import { headMoved, KEPT_REFS, REF, type RepoBackend } from "./repo-backend.ts";

export const OBJECTS = "git_objects";
export const REFS = "git_refs";
/** The virtual gitdir isomorphic-git is told about; only its objects/ paths mean anything. */
const GITDIR = "/svc-store.git";
const OBJECT_PATH = /^\/svc-store\.git\/objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/;
/** Raw objects kept in memory; ConfigRepo caches parsed trees and blob texts above this. */
const CACHE_LIMIT = 2048;
/** Object deletions per store write when a kept ref is dropped. */
const DELETE_BATCH = 500;

interface ObjectDoc {
  /** The deflated loose object, base64. */
  deflated: string;
}

interface RefDoc {
  oid: string;
}

function notFound(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: no such file or directory, '${path}'`), { code: "ENOENT", path });
}

function objectId(path: unknown): string | null {
  const match = typeof path === "string" ? OBJECT_PATH.exec(path) : null;
  return match ? match[1]! + match[2]! : null;
}

function fileStat(size: number) {
  return {
    size,
    mode: 0o100444,
    isFile: () => true,
    isDirectory: () => false,
    isSymbolicLink: () => false,
  };
}

export function storeBackend(store: Store): RepoBackend {
  /** Objects written by the commit in progress, not yet in the store. */
  const pending = new Map<string, Uint8Array>();
  /** Objects known to be in the store (immutable: content-addressed). */
  const cache = new BoundedMap<string, Uint8Array>(CACHE_LIMIT);
  const remember = (oid: string, bytes: Uint8Array) => void cache.set(oid, bytes);

  // isomorphic-git probes for packs, shallow files, alternates and the like:
  // all of that is absent here. It reads and writes loose objects only.
  const fs: PromiseFsClient = {
    promises: {
      async readFile(path: string) {
        const oid = objectId(path);
        if (oid === null) throw notFound(path);
        let bytes = pending.get(oid) ?? cache.get(oid);
        if (bytes === undefined) {
          const doc = await store.get<ObjectDoc>(OBJECTS, oid);
          if (doc === null) throw notFound(path);
          bytes = Buffer.from(doc.data.deflated, "base64");
          remember(oid, bytes);
        }
        return Buffer.from(bytes);
      },
      async writeFile(path: string, data: Uint8Array | string) {
        const oid = objectId(path);
        if (oid === null) throw new Error(`the store-backed git repository writes objects only, not '${path}'`);
        pending.set(oid, typeof data === "string" ? Buffer.from(data) : data);
      },
      // Only asked whether an object exists before writing it. An object in
      // the store but not in the cache is written again: same id, same bytes.
      async stat(path: string) {
        const oid = objectId(path);
        const bytes = oid === null ? undefined : (pending.get(oid) ?? cache.get(oid));
        if (bytes === undefined) throw notFound(path);
        return fileStat(bytes.length);
      },
      lstat(path: string) {
        return fs.promises.stat(path);
      },
      async readdir(path: string) {
        throw notFound(path);
      },
      async readlink(path: string) {
        throw notFound(path);
      },
      async symlink(_target: string, path: string) {
        throw new Error(`the store-backed git repository writes objects only, not '${path}'`);
      },
      async mkdir() {},
      async rmdir(path: string) {
        throw notFound(path);
      },
      async unlink(path: string) {
        throw notFound(path);
      },
    },
  };

  /** Writes the pending objects, the branch move from `parent` and `extra` in one batch guarded by the branch's version. */
  const move = async (parent: string | null, commit: string, extra: WriteOp[], audit: AuditEntry[]): Promise<boolean> => {
    const objects = [...pending];
    pending.clear();
    const ref = await store.get<RefDoc>(REFS, REF);
    if ((ref?.data.oid ?? null) !== parent) throw headMoved();
    const ops: WriteOp[] = objects.map(([oid, bytes]) => ({
      op: "put",
      collection: OBJECTS,
      id: oid,
      data: { deflated: Buffer.from(bytes).toString("base64") } satisfies ObjectDoc,
    }));
    ops.push(...extra, { op: "put", collection: REFS, id: REF, data: { oid: commit } satisfies RefDoc, expect: ref?.version ?? "absent" });
    try {
      await store.write(ops, audit);
    } catch (error) {
      if (error instanceof ConflictError && error.code === "version_conflict") throw headMoved();
      throw error;
    }
    for (const [oid, bytes] of objects) remember(oid, bytes);
    return true;
  };
  const keptRefs = async (): Promise<Map<string, string>> =>
    new Map((await store.list<RefDoc>(REFS, { prefix: KEPT_REFS })).map((doc) => [doc.id, doc.data.oid]));

  return {
    fs,
    gitdir: GITDIR,
    // Writes only fill the in-memory buffer.
    objectWriters: 64,
    async head() {
      return (await store.get<RefDoc>(REFS, REF))?.data.oid ?? null;
    },
    advance(parent, commit, audit) {
      return move(parent, commit, [], audit);
    },
    abandon() {
      pending.clear();
    },
    keptRefs,
    replace(parent, commit, keep, audit) {
      return move(parent, commit, [{ op: "put", collection: REFS, id: keep.ref, data: { oid: keep.oid } satisfies RefDoc, expect: "absent" }], audit);
    },
    /**
     * Other replicas keep committing meanwhile. Each deletion batch carries
     * the branch at the version the reachable set was computed from (a put of
     * the same ref, expecting that version), so a commit landing in between
     * fails the batch and the set is computed again: an object a new commit
     * wrote is never deleted. That put also fails a commit racing it, with
     * 409 head_moved, which the committer repeats.
     */
    async dropRef(ref, reachable, audit) {
      const doc = await store.get<RefDoc>(REFS, ref);
      if (doc) await store.write([{ op: "delete", collection: REFS, id: ref, expect: doc.version }], audit);
      let deleted = 0;
      for (;;) {
        const branch = await store.get<RefDoc>(REFS, REF);
        const heads = [...(await keptRefs()).values(), ...(branch ? [branch.data.oid] : [])];
        const keep = await reachable(heads);
        let version = branch?.version;
        let batch: string[] = [];
        const flush = async () => {
          const guard: WriteOp[] = branch ? [{ op: "put", collection: REFS, id: REF, data: branch.data, expect: version }] : [];
          const written = await store.write([...batch.map((id): WriteOp => ({ op: "delete", collection: OBJECTS, id })), ...guard]);
          if (branch) version = written[0]!.version;
          for (const id of batch) cache.delete(id);
          deleted += batch.length;
          batch = [];
        };
        try {
          for await (const object of scan(store, OBJECTS)) {
            if (keep.has(object.id)) continue;
            batch.push(object.id);
            if (batch.length >= DELETE_BATCH) await flush();
          }
          if (batch.length > 0) await flush();
          return { deleted, audited: doc !== null };
        } catch (error) {
          if (!(error instanceof ConflictError && error.code === "version_conflict")) throw error;
        }
      }
    },
  };
}
