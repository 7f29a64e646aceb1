/**
 * The git repository behind the config store: a bare repository that plain
 * `git log` and `git show` read. Every file (objects, then the branch ref
 * last) is written to a temp name, synced and renamed, so a crash at any
 * moment leaves either the old head or the new one, never a torn object.
 */
import git from "isomorphic-git";
import { existsSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname, join } from "node:path";
import { ConflictError } from "../errors.ts";

const BRANCH = "main";
const REF = `refs/heads/${BRANCH}`;
/** Blob writes in flight at once during a commit. */
const BLOB_WRITERS = 16;

async function syncDir(path: string): Promise<void> {
  const dir = await fsp.open(path, "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Writes a whole file or nothing: to `temp`, synced, then renamed over `path`. */
async function atomicWrite(path: string, temp: string, data: string | Uint8Array, mode?: number): Promise<void> {
  const handle = await fsp.open(temp, "w", mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(temp, path);
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
    },
    /** Makes every rename so far survive a power cut. */
    async flush(): Promise<void> {
      const pending = [...dirs];
      dirs.clear();
      await Promise.all(pending.map(syncDir));
    },
  };
}

export interface CommitInfo {
  commit: string;
  message: string;
  author: string;
  time: string;
  parent: string | null;
}

export interface Author {
  name: string;
  email: string;
}

/** path → blob id of one commit's tree. */
export type TreeIndex = Map<string, string>;

interface TreeEntry {
  mode: string;
  path: string;
  oid: string;
  type: "blob" | "tree";
}

export class ConfigRepo {
  private readonly fs = durableFs();
  private readonly blobs = new Map<string, string>();
  private readonly trees = new Map<string, TreeIndex>();
  /** Serialises commits in this process; the ref check guards against others. */
  private lock: Promise<unknown> = Promise.resolve();

  private constructor(readonly gitdir: string) {}

  /** Opens the bare repository, creating it on first use. */
  static async open(gitdir: string): Promise<ConfigRepo> {
    if (!existsSync(join(gitdir, "HEAD"))) {
      await fsp.mkdir(gitdir, { recursive: true });
      const fs = durableFs();
      await git.init({ fs, dir: gitdir, gitdir, bare: true, defaultBranch: BRANCH });
      await fs.flush();
    }
    return new ConfigRepo(gitdir);
  }

  /** The branch head, or null before the first commit. */
  async head(): Promise<string | null> {
    try {
      return (await fsp.readFile(join(this.gitdir, REF), "utf8")).trim() || null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  }

  /** Every file of a commit, path → blob id (cached: commits never change). */
  async tree(commit: string | null): Promise<TreeIndex> {
    if (commit === null) return new Map();
    let index = this.trees.get(commit);
    if (!index) {
      const { commit: parsed } = await git.readCommit({ fs: this.fs, gitdir: this.gitdir, oid: commit });
      index = new Map();
      await this.walk(parsed.tree, "", index);
      this.trees.set(commit, index);
    }
    return index;
  }

  private async walk(treeOid: string, prefix: string, index: TreeIndex): Promise<void> {
    const { tree } = await git.readTree({ fs: this.fs, gitdir: this.gitdir, oid: treeOid });
    for (const entry of tree) {
      if (entry.type === "tree") await this.walk(entry.oid, `${prefix}${entry.path}/`, index);
      else if (entry.type === "blob") index.set(prefix + entry.path, entry.oid);
    }
  }

  /** A blob's text (cached: blobs are content-addressed). */
  async read(oid: string): Promise<string> {
    let text = this.blobs.get(oid);
    if (text === undefined) {
      const { blob } = await git.readBlob({ fs: this.fs, gitdir: this.gitdir, oid });
      text = new TextDecoder().decode(blob);
      this.blobs.set(oid, text);
    }
    return text;
  }

  /** The blob id a text would have, writing the blob. */
  async writeBlob(text: string): Promise<string> {
    const oid = await git.writeBlob({ fs: this.fs, gitdir: this.gitdir, blob: new TextEncoder().encode(text) });
    this.blobs.set(oid, text);
    return oid;
  }

  /**
   * Commits `changes` (path → new text, or null to delete) on top of `parent`,
   * which must still be the head. Returns the new commit.
   */
  commit(parent: string | null, changes: Map<string, string | null>, message: string, author: Author, now = new Date()): Promise<CommitInfo> {
    const run = this.lock.then(() => this.commitLocked(parent, changes, message, author, now));
    this.lock = run.catch(() => {});
    return run;
  }

  private async commitLocked(
    parent: string | null,
    changes: Map<string, string | null>,
    message: string,
    author: Author,
    now: Date,
  ): Promise<CommitInfo> {
    if ((await this.head()) !== parent) {
      throw new ConflictError("The configuration history moved while committing; review the changes and commit again.", "head_moved");
    }
    const index = new Map(await this.tree(parent));
    const added: [string, string][] = [];
    for (const [path, text] of changes) {
      if (text === null) index.delete(path);
      else added.push([path, text]);
    }
    // Blobs are independent files: write a few at a time so their fsyncs overlap.
    for (let i = 0; i < added.length; i += BLOB_WRITERS) {
      const batch = added.slice(i, i + BLOB_WRITERS);
      const oids = await Promise.all(batch.map(([, text]) => this.writeBlob(text)));
      batch.forEach(([path], j) => index.set(path, oids[j]!));
    }
    const tree = await this.writeTrees(index);
    const person = { name: author.name, email: author.email, timestamp: Math.floor(now.getTime() / 1000), timezoneOffset: 0 };
    const commit = await git.writeCommit({
      fs: this.fs,
      gitdir: this.gitdir,
      commit: { message: message.endsWith("\n") ? message : message + "\n", tree, parent: parent ? [parent] : [], author: person, committer: person },
    });
    await this.fs.flush();
    await this.moveRef(commit);
    this.trees.set(commit, index);
    return { commit, message: message.trim(), author: author.name, time: new Date(person.timestamp * 1000).toISOString(), parent };
  }

  /** Writes the nested trees for a flat path index; returns the root tree id. */
  private async writeTrees(index: TreeIndex): Promise<string> {
    interface Dir {
      files: Map<string, string>;
      dirs: Map<string, Dir>;
    }
    const root: Dir = { files: new Map(), dirs: new Map() };
    for (const [path, oid] of index) {
      const parts = path.split("/");
      let dir = root;
      for (const part of parts.slice(0, -1)) {
        let next = dir.dirs.get(part);
        if (!next) dir.dirs.set(part, (next = { files: new Map(), dirs: new Map() }));
        dir = next;
      }
      dir.files.set(parts[parts.length - 1]!, oid);
    }
    const write = async (dir: Dir): Promise<string> => {
      const entries: TreeEntry[] = [];
      for (const [name, sub] of dir.dirs) entries.push({ mode: "040000", path: name, oid: await write(sub), type: "tree" });
      for (const [name, oid] of dir.files) entries.push({ mode: "100644", path: name, oid, type: "blob" });
      return git.writeTree({ fs: this.fs, gitdir: this.gitdir, tree: entries });
    };
    return write(root);
  }

  /** Points the branch at `commit` atomically and durably; the temp file is git's own lock name. */
  private async moveRef(commit: string): Promise<void> {
    const refPath = join(this.gitdir, REF);
    await fsp.mkdir(dirname(refPath), { recursive: true });
    await atomicWrite(refPath, `${refPath}.lock`, commit + "\n");
    await syncDir(dirname(refPath));
  }

  /** Commits newest first, starting at `from` (default: the head). */
  async log(from: string | null, limit: number): Promise<CommitInfo[]> {
    const start = from ?? (await this.head());
    if (start === null) return [];
    const entries = await git.log({ fs: this.fs, gitdir: this.gitdir, ref: start, depth: limit });
    return entries.map(({ oid, commit }) => ({
      commit: oid,
      message: commit.message.trim(),
      author: commit.author.name,
      time: new Date(commit.author.timestamp * 1000).toISOString(),
      parent: commit.parent[0] ?? null,
    }));
  }
}
