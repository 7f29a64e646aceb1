/**
 * The git repository behind the config store, on one of two backends chosen
 * at open time: a bare repository on disk (embedded mode, repo-disk.ts) or
 * documents of the shared Store (external mode, repo-store.ts). Either way it
 * is real git: same object ids, and the history exports as a git bundle.
 */
import git, { type CommitObject } from "isomorphic-git";
import { ConflictError, NotFoundError } from "../errors.ts";
import type { AuditEntry, Store } from "../store/store.ts";
import { headMoved, KEPT_REFS, type RepoBackend } from "./repo-backend.ts";
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

/** A history rewritten by `ConfigRepo.rewrite`. */
export interface Rewrite {
  /** The head before, now kept at `keptRef`. */
  before: string;
  after: string;
  keptRef: string;
  /** Old id → new id of every commit written anew. */
  ids: Map<string, string>;
}

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
    return [...(await this.reachable([head]))];
  }

  /** Every object reachable from any of `heads`. */
  private async reachable(heads: string[]): Promise<Set<string>> {
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
    for (const head of heads) {
      if (seen.has(head)) continue; // another head's history already holds it
      for (const { oid, commit } of await git.log({ fs: this.fs, gitdir: this.gitdir, ref: head })) {
        if (seen.has(oid)) break; // the rest of this line is seen (the history is one line)
        seen.add(oid);
        await walkTree(commit.tree);
      }
    }
    return seen;
  }

  /** The whole history as one packfile, with the head it leads to; null before the first commit. */
  async pack(): Promise<{ head: string; packfile: Uint8Array } | null> {
    const head = await this.head();
    if (head === null) return null;
    const { packfile } = await git.packObjects({ fs: this.fs, gitdir: this.gitdir, oids: await this.objectIds(head) });
    return { head, packfile: packfile! };
  }

  /** The refs kept beside the branch (refs/svc/…), name → commit. */
  keptRefs(): Promise<Map<string, string>> {
    return this.backend.keptRefs();
  }

  /**
   * Rewrites the branch's history. `edit` answers, for each commit oldest
   * first, the files to replace in its tree (path → new text). A commit whose
   * tree and parent stay the same keeps its id; every other is written anew
   * with the same author, committer, times and message. Then, after
   * `beforeMove` (to store what the new trees name), the branch moves to the
   * new head and `keepRef` keeps the old one readable, in one step guarded
   * by the head: 409 head_moved when a commit landed meanwhile. Null, with
   * nothing moved, when no commit changed.
   */
  rewrite(
    edit: (commit: string, tree: TreeIndex) => Promise<Map<string, string>>,
    options: { keepRef: string; beforeMove?: () => Promise<void>; audit?: (rewrite: Rewrite) => AuditEntry[] },
  ): Promise<(Rewrite & { audited: boolean }) | null> {
    if (!options.keepRef.startsWith(KEPT_REFS)) throw new Error(`a kept ref is named ${KEPT_REFS}…, not ${options.keepRef}`);
    return this.locked(async () => {
      const before = await this.head();
      if (before === null) return null;
      const ids = new Map<string, string>();
      // Oldest first; ConfigRepo only ever commits on the head, so the history is one line.
      for (const { oid, commit } of (await git.log({ fs: this.fs, gitdir: this.gitdir, ref: before })).reverse()) {
        const parent = commit.parent.map((p) => {
          if (!ids.has(p)) throw new Error(`commit ${oid} has parent ${p} outside its line of history; cannot rewrite it`);
          return ids.get(p)!;
        });
        const index = new Map(await this.tree(oid));
        const files = [...(await edit(oid, index))];
        for (let i = 0; i < files.length; i += this.backend.objectWriters) {
          const batch = files.slice(i, i + this.backend.objectWriters);
          const oids = await Promise.all(batch.map(([, text]) => this.writeBlob(text)));
          batch.forEach(([path], j) => index.set(path, oids[j]!));
        }
        const tree = files.length === 0 ? commit.tree : await this.writeTrees(index);
        if (tree === commit.tree && parent.every((p, i) => p === commit.parent[i])) {
          ids.set(oid, oid);
          continue;
        }
        const rewritten: CommitObject = { message: commit.message, tree, parent, author: commit.author, committer: commit.committer };
        const next = await git.writeCommit({ fs: this.fs, gitdir: this.gitdir, commit: rewritten });
        this.trees.set(next, index);
        ids.set(oid, next);
      }
      const after = ids.get(before)!;
      for (const [old, next] of ids) if (old === next) ids.delete(old);
      if (after === before) {
        this.backend.abandon();
        return null;
      }
      await options.beforeMove?.();
      const rewrite: Rewrite = { before, after, keptRef: options.keepRef, ids };
      const audited = await this.backend.replace(before, after, { ref: options.keepRef, oid: before }, options.audit?.(rewrite) ?? []);
      return { ...rewrite, audited };
    });
  }

  /**
   * The commits of kept ref `ref` that the branch now has rewritten, old id →
   * new id: the two lines paired from their first commit while author,
   * committer, times and message agree (what `rewrite` keeps).
   */
  async rewrittenSince(ref: string): Promise<Map<string, string>> {
    const kept = (await this.keptRefs()).get(ref);
    const head = await this.head();
    const ids = new Map<string, string>();
    if (kept === undefined || head === null) return ids;
    const line = async (from: string) => (await git.log({ fs: this.fs, gitdir: this.gitdir, ref: from })).reverse();
    const [old, now] = [await line(kept), await line(head)];
    const same = (a: CommitObject, b: CommitObject) =>
      a.message === b.message && JSON.stringify([a.author, a.committer]) === JSON.stringify([b.author, b.committer]);
    for (let i = 0; i < Math.min(old.length, now.length) && same(old[i]!.commit, now[i]!.commit); i++) {
      if (old[i]!.oid !== now[i]!.oid) ids.set(old[i]!.oid, now[i]!.oid);
    }
    return ids;
  }

  /**
   * Deletes kept ref `ref` and every object no other ref reaches (what only
   * it reached), answering how many objects went; 404 for a ref that is not
   * kept. `audit` lands with the ref's deletion in the store; on disk it is
   * the caller's to store (`audited` false).
   */
  async dropRef(ref: string, audit: (commit: string) => AuditEntry[]): Promise<{ commit: string; deleted: number; audited: boolean }> {
    return this.locked(async () => {
      const commit = (await this.keptRefs()).get(ref);
      if (commit === undefined) throw new NotFoundError("Kept ref", ref);
      const result = await this.backend.dropRef(ref, (heads) => this.reachable(heads), audit(commit));
      this.trees.clear(); // trees of commits that are gone
      return { commit, ...result };
    });
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
