/**
 * The external mode's history: git objects and the branch ref as documents of
 * the shared Store, so every replica serves the same history and losing a
 * replica's disk loses nothing. An object is the document `git_objects/<oid>`
 * holding exactly the bytes git writes to objects/xx/yyyy (zlib-deflated
 * loose object), base64; the branch is `git_refs/refs/heads/main` = `{ oid }`.
 * A commit buffers its new objects in memory and writes them together with the
 * ref move in one Store batch, the ref guarded by compare-and-swap: two
 * replicas committing at once get one success and one 409 head_moved, and a
 * failed commit leaves nothing behind.
 */
import type { PromiseFsClient } from "isomorphic-git";
import { ConflictError } from "../errors.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { headMoved, REF, type RepoBackend } from "./repo-backend.ts";

export const OBJECTS = "git_objects";
export const REFS = "git_refs";
/** The virtual gitdir isomorphic-git is told about; only its objects/ paths mean anything. */
const GITDIR = "/svc-store.git";
const OBJECT_PATH = /^\/svc-store\.git\/objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/;
/** Raw objects kept in memory; ConfigRepo caches parsed trees and blob texts above this. */
const CACHE_LIMIT = 2048;

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
  const cache = new Map<string, Uint8Array>();
  const remember = (oid: string, bytes: Uint8Array) => {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(oid, bytes);
  };

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

  return {
    fs,
    gitdir: GITDIR,
    // Writes only fill the in-memory buffer.
    objectWriters: 64,
    async head() {
      return (await store.get<RefDoc>(REFS, REF))?.data.oid ?? null;
    },
    async advance(parent, commit, audit) {
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
      ops.push({ op: "put", collection: REFS, id: REF, data: { oid: commit } satisfies RefDoc, expect: ref?.version ?? "absent" });
      try {
        await store.write(ops, audit);
      } catch (error) {
        if (error instanceof ConflictError && error.code === "version_conflict") throw headMoved();
        throw error;
      }
      for (const [oid, bytes] of objects) remember(oid, bytes);
      return true;
    },
    abandon() {
      pending.clear();
    },
  };
}
