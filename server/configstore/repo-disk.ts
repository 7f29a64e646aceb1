/**
 * The embedded mode's history: a bare repository on disk that plain `git log`
 * and `git show` read. Every file (objects, then the branch ref last) is
 * written to a temp name, synced and renamed, so a crash at any moment leaves
 * either the old head or the new one, never a torn object.
 */
import git from "isomorphic-git";
import { existsSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname, join } from "node:path";
import { InsufficientStorageError } from "../errors.ts";
import { BRANCH, headMoved, KEPT_REFS, REF, type RepoBackend } from "./repo-backend.ts";

/** ENOSPC becomes 507 storage_full; any other error is returned as it is. */
function diskFull(error: unknown): unknown {
  return (error as NodeJS.ErrnoException).code === "ENOSPC"
    ? new InsufficientStorageError("the git repository beside the state file (storage.boltPath)")
    : error;
}

async function syncDir(path: string): Promise<void> {
  const dir = await fsp.open(path, "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/**
 * Writes a whole file or nothing: to `temp`, synced, then renamed over `path`.
 * A failed write (a full disk) removes its temp file, so it neither holds
 * space nor leaves git's lock behind.
 */
async function atomicWrite(path: string, temp: string, data: string | Uint8Array, mode?: number): Promise<void> {
  try {
    const handle = await fsp.open(temp, "w", mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, path);
  } catch (error) {
    await fsp.rm(temp, { force: true });
    throw diskFull(error);
  }
}

/**
 * node:fs/promises for isomorphic-git with atomic writes. It skips writing
 * an object whose file exists, so a file cut short by a crash would stay
 * corrupt forever; temp names start `tmp_obj_`, which git ignores. The
 * directories written to are synced together by `flush`, once per commit.
 */
function durableFs() {
  const dirs = new Set<string>();
  return {
    promises: {
      ...fsp,
      writeFile(path: string, data: string | Uint8Array, options?: { mode?: number } | string) {
        dirs.add(dirname(path));
        const temp = join(dirname(path), `tmp_obj_${process.pid}_${crypto.randomUUID()}`);
        return atomicWrite(path, temp, data, typeof options === "object" ? options.mode : undefined);
      },
      mkdir(path: string, options?: { recursive?: boolean; mode?: number }) {
        return fsp.mkdir(path, options).catch((error: unknown) => Promise.reject(diskFull(error)));
      },
    },
    /** Makes every rename so far survive a power cut. */
    async flush(): Promise<void> {
      const pending = [...dirs];
      dirs.clear();
      await Promise.all(pending.map(syncDir));
    },
  };
}

/** The object ids a pack index (version 2) lists: a fan-out table whose last entry is the count, then the ids. */
function packIndexIds(idx: Buffer): string[] {
  if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new Error("unsupported pack index (git writes version 2)");
  const count = idx.readUInt32BE(8 + 255 * 4);
  const start = 8 + 256 * 4;
  return Array.from({ length: count }, (_, i) => idx.subarray(start + i * 20, start + (i + 1) * 20).toString("hex"));
}

/** Opens the bare repository at `gitdir`, creating it on first use. */
export async function diskBackend(gitdir: string): Promise<RepoBackend> {
  const fs = durableFs();
  if (!existsSync(join(gitdir, "HEAD"))) {
    await fsp.mkdir(gitdir, { recursive: true });
    await git.init({ fs, dir: gitdir, gitdir, bare: true, defaultBranch: BRANCH });
    await fs.flush();
  }
  const refPath = join(gitdir, REF);
  const lockPath = `${refPath}.lock`;
  // A lock file left by a crash between creating and renaming it: whoever opens
  // the repository is its only writer (store/state-lock.ts), so it is stale.
  await fsp.rm(lockPath, { force: true });
  const head = async (): Promise<string | null> => {
    try {
      return (await fsp.readFile(refPath, "utf8")).trim() || null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  };
  // Compare-and-swap, as git moves a ref: create `<ref>.lock` exclusively
  // (O_EXCL: of two writers one gets it), check the ref still names
  // `parent`, write the new id into the lock file, sync, rename it over the
  // ref. One process owns the repository (store/state-lock.ts) and
  // ConfigRepo serialises its commits; this holds even when that fails.
  const advance = async (parent: string | null, commit: string): Promise<boolean> => {
    await fs.flush();
    await fsp.mkdir(dirname(refPath), { recursive: true });
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(lockPath, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") throw headMoved();
      throw diskFull(error);
    }
    try {
      try {
        if ((await head()) !== parent) throw headMoved();
        await handle.writeFile(commit + "\n");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fsp.rename(lockPath, refPath);
    } catch (error) {
      await fsp.rm(lockPath, { force: true });
      throw diskFull(error);
    }
    await syncDir(dirname(refPath));
    return false;
  };
  const keptRefs = async (): Promise<Map<string, string>> => {
    const names = await git.listRefs({ fs, gitdir, filepath: KEPT_REFS.slice(0, -1) });
    const refs = new Map<string, string>();
    for (const name of names) refs.set(KEPT_REFS + name, await git.resolveRef({ fs, gitdir, ref: KEPT_REFS + name }));
    return refs;
  };
  return {
    fs,
    gitdir,
    // Disk writes are slow: overlap their fsyncs.
    objectWriters: 16,
    head,
    advance,
    // Objects already renamed into place are unreferenced, which git tolerates.
    abandon() {},
    keptRefs,
    async replace(parent, commit, keep) {
      await git.writeRef({ fs, gitdir, ref: keep.ref, value: keep.oid, force: false });
      return advance(parent, commit); // its flush makes the kept ref durable before the branch moves
    },
    // One process owns the repository (the server is stopped meanwhile), so
    // nothing writes objects while this deletes them.
    async dropRef(ref, reachable) {
      await git.deleteRef({ fs, gitdir, ref });
      await fs.flush(); // packed-refs, when it named the ref
      const refDir = dirname(join(gitdir, ref));
      if (existsSync(refDir)) await syncDir(refDir);
      const heads = [...(await keptRefs()).values()];
      const branch = await head();
      if (branch !== null) heads.push(branch);
      const keep = await reachable(heads);
      const objects = join(gitdir, "objects");
      const gone = new Set<string>();
      // Objects `git gc` packed: those still reached are written loose, then the packs go.
      const packDir = join(objects, "pack");
      const packs = existsSync(packDir) ? await fsp.readdir(packDir) : [];
      if (packs.length > 0) {
        for (const name of packs) {
          if (!name.endsWith(".idx")) continue;
          for (const oid of packIndexIds(await fsp.readFile(join(packDir, name)))) if (!keep.has(oid)) gone.add(oid);
        }
        for (const oid of keep) {
          if (existsSync(join(objects, oid.slice(0, 2), oid.slice(2)))) continue;
          const { type, object } = await git.readObject({ fs, gitdir, oid, format: "content" });
          await git.writeObject({ fs, gitdir, type: type as "blob" | "tree" | "commit" | "tag", object: object as Uint8Array, format: "content" });
        }
        await fs.flush();
        for (const name of packs) await fsp.rm(join(packDir, name), { force: true });
        await syncDir(packDir);
      }
      for (const dir of await fsp.readdir(objects)) {
        if (!/^[0-9a-f]{2}$/.test(dir)) continue;
        for (const name of await fsp.readdir(join(objects, dir))) {
          if (!/^[0-9a-f]{38}$/.test(name) || keep.has(dir + name)) continue;
          await fsp.rm(join(objects, dir, name));
          gone.add(dir + name);
        }
        await syncDir(join(objects, dir));
      }
      const deleted = gone.size;
      return { deleted, audited: false };
    },
  };
}
