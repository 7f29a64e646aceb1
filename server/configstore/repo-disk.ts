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
import { BRANCH, headMoved, REF, type RepoBackend } from "./repo-backend.ts";

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
  return {
    fs,
    gitdir,
    // Disk writes are slow: overlap their fsyncs.
    objectWriters: 16,
    head,
    // Compare-and-swap, as git moves a ref: create `<ref>.lock` exclusively
    // (O_EXCL: of two writers one gets it), check the ref still names
    // `parent`, write the new id into the lock file, sync, rename it over the
    // ref. One process owns the repository (store/state-lock.ts) and
    // ConfigRepo serialises its commits; this holds even when that fails.
    async advance(parent, commit) {
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
    },
    // Objects already renamed into place are unreferenced, which git tolerates.
    abandon() {},
  };
}
