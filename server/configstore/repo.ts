/**
 * The git repository behind the config store, on one of two backends chosen
 * at open time: a bare repository on disk (embedded mode, repo-disk.ts) or
 * documents of the shared Store (external mode, repo-store.ts). Either way it
 * is real git: same object ids, and the history exports as a git bundle.
 */
import git from "isomorphic-git";
import { ConflictError } from "../errors.ts";
import type { AuditEntry, Store } from "../store/store.ts";
import { headMoved, type RepoBackend } from "./repo-backend.ts";
import { diskBackend } from "./repo-disk.ts";
import { storeBackend } from "./repo-store.ts";

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
  private readonly fs: RepoBackend["fs"];
  private readonly gitdir: string;
  private readonly blobs = new Map<string, string>();
  private readonly trees = new Map<string, TreeIndex>();
  /** Serialises commits in this process; the backend's ref check guards against others. */
  private lock: Promise<unknown> = Promise.resolve();

  private constructor(private readonly backend: RepoBackend) {
    this.fs = backend.fs;
    this.gitdir = backend.gitdir;
  }

  /** Opens the bare repository on disk at `gitdir`, creating it on first use. */
  static async open(gitdir: string): Promise<ConfigRepo> {
    return new ConfigRepo(await diskBackend(gitdir));
  }

  /** The history kept in `store` itself (external mode), shared by every replica on it. */
  static inStore(store: Store): ConfigRepo {
    return new ConfigRepo(storeBackend(store));
  }

  /** The branch head, or null before the first commit. */
  head(): Promise<string | null> {
    return this.backend.head();
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
   * which must still be the head. Returns the new commit, and whether the
   * entries `audit` made for it were stored with it atomically (in the
   * database) or are the caller's to store (on disk).
   */
  commit(
    parent: string | null,
    changes: Map<string, string | null>,
    message: string,
    author: Author,
    now = new Date(),
    audit: (commit: CommitInfo) => AuditEntry[] = () => [],
  ): Promise<CommitInfo & { audited: boolean }> {
    return this.locked(() => this.commitLocked(parent, changes, message, author, now, audit));
  }

  /** Runs `write` after every earlier write of this process; objects it leaves unpublished are dropped. */
  private locked<T>(write: () => Promise<T>): Promise<T> {
    const run = this.lock.then(write).catch((error: unknown) => {
      this.backend.abandon();
      throw error;
    });
    this.lock = run.catch(() => {});
    return run;
  }

  private async commitLocked(
    parent: string | null,
    changes: Map<string, string | null>,
    message: string,
    author: Author,
    now: Date,
    audit: (commit: CommitInfo) => AuditEntry[],
  ): Promise<CommitInfo & { audited: boolean }> {
    if ((await this.head()) !== parent) throw headMoved();
    const index = new Map(await this.tree(parent));
    const added: [string, string][] = [];
    for (const [path, text] of changes) {
      if (text === null) index.delete(path);
      else added.push([path, text]);
    }
    // Blobs are independent: write a few at a time (on disk, their fsyncs overlap).
    const writers = this.backend.objectWriters;
    for (let i = 0; i < added.length; i += writers) {
      const batch = added.slice(i, i + writers);
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
    const info: CommitInfo = { commit, message: message.trim(), author: author.name, time: new Date(person.timestamp * 1000).toISOString(), parent };
    const audited = await this.backend.advance(parent, commit, audit(info));
    this.trees.set(commit, index);
    return { ...info, audited };
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

  /** Every object reachable from `head`: its commits, their trees and blobs, each once. */
  async objectIds(head: string): Promise<string[]> {
    const seen = new Set<string>();
    const walkTree = async (oid: string): Promise<void> => {
      if (seen.has(oid)) return; // an unchanged subtree: everything under it is already seen
      seen.add(oid);
      const { tree } = await git.readTree({ fs: this.fs, gitdir: this.gitdir, oid });
      for (const entry of tree) {
        if (entry.type === "tree") await walkTree(entry.oid);
        else if (entry.type === "blob") seen.add(entry.oid);
      }
    };
    const commits = await git.log({ fs: this.fs, gitdir: this.gitdir, ref: head });
    for (const { oid, commit } of commits) {
      seen.add(oid);
      await walkTree(commit.tree);
    }
    return [...seen];
  }

  /** The whole history as one packfile, with the head it leads to; null before the first commit. */
  async pack(): Promise<{ head: string; packfile: Uint8Array } | null> {
    const head = await this.head();
    if (head === null) return null;
    const { packfile } = await git.packObjects({ fs: this.fs, gitdir: this.gitdir, oids: await this.objectIds(head) });
    return { head, packfile: packfile! };
  }

  /**
   * Copies `from`'s whole history into `to` and points `to`'s branch at the
   * same head, with the same object ids (for moving a deployment between
   * backends). `to` must be empty or already at that head; 409
   * history_exists otherwise. Returns the head copied (null: nothing to copy).
   */
  static copyHistory(from: ConfigRepo, to: ConfigRepo): Promise<string | null> {
    return to.locked(async () => {
      const head = await from.head();
      const current = await to.head();
      if (current === head) return head;
      if (current !== null) {
        throw new ConflictError("The target repository already has a different history; copy into an empty one.", "history_exists");
      }
      const writers = to.backend.objectWriters;
      const oids = await from.objectIds(head!);
      for (let i = 0; i < oids.length; i += writers) {
        await Promise.all(
          oids.slice(i, i + writers).map(async (oid) => {
            const { type, object } = await git.readObject({ fs: from.fs, gitdir: from.gitdir, oid, format: "content" });
            if (type === "deflated" || type === "wrapped") throw new Error(`object ${oid} was not parsed`); // format "content" always is
            const written = await git.writeObject({ fs: to.fs, gitdir: to.gitdir, type, object: object as Uint8Array, format: "content" });
            if (written !== oid) throw new Error(`copying object ${oid} gave ${written}`);
          }),
        );
      }
      await to.backend.advance(null, head!, []);
      return head;
    });
  }
}
