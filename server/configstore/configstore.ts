/**
 * The git-backed configuration store. The working tree is every file of the
 * current configuration, held in the Store (so an edit and its audit entry
 * land in one atomic write); pending changes are the working tree against the
 * head commit; `commit` turns them into a git commit. Publishing reads commits
 * only, so an edit never reaches a collector before someone commits it.
 */
import { LAYOUTS, type PipelineLayout } from "./pipeline-layout.ts";
import { createTwoFilesPatch } from "diff";
import type { FileChange } from "../../shared/changes.ts";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import type { AuditEntry, Store, WriteOp } from "../store/store.ts";
import { addToSnapshot, blobId, copySnapshot, emptySnapshot, removeFromSnapshot, type Snapshot } from "./layout.ts";
import { gitBundle } from "./bundle.ts";
import { KeyedLock } from "../lib/keyed-lock.ts";
import { nameFiles, type CollectorNames } from "./names.ts";
import type { CommitInfo, ConfigRepo } from "./repo.ts";

const WORKTREE = "worktree";

interface WorktreeFile {
  text: string;
  /** The git blob id of `text`, kept so comparing with a commit needs no blob reads. */
  oid: string;
}

export type ChangeKind = "added" | "modified" | "deleted";

export type { FileChange };

/** One file edit: new text, or null to delete; `expect` guards it like a Store write. */
export interface Edit {
  path: string;
  text: string | null;
  expect?: number | "absent" | "present";
}

export interface CommitResult extends CommitInfo {
  files: FileChange[];
}

/** One working-tree file as read: its text and the version that text is. */
interface FileVersion {
  version: number;
  text: string;
}

/**
 * The working tree as one read saw it: the parsed records, and for every file
 * the version those records came from, so a read-modify-write guards its
 * write with exactly what it read (never a version read later).
 */
export class Worktree {
  constructor(
    readonly snapshot: Snapshot,
    private readonly files: ReadonlyMap<string, FileVersion>,
  ) {}

  /** The version of `path` this read holds (null: absent), to guard a write of it. */
  version(path: string): number | null {
    return this.files.get(path)?.version ?? null;
  }

  /**
   * Rewrites `path` unchanged, guarded by the version read. A write that
   * starts depending on a record (an activation of a source, a route on a
   * pipeline) carries this, so it fails if the record changed or went, and a
   * delete of the record racing it fails on the version this one bumps.
   */
  keep(path: string): Edit {
    const file = this.files.get(path);
    if (!file) throw new Error(`keep(${path}): the file is not in this read`);
    return { path, text: file.text, expect: file.version };
  }
}

const noCollectorNames: CollectorNames = async () => null;

/** One file's unified diff as `git diff` writes it (a/ and b/ names, /dev/null for a side that is absent). */
function filePatch(path: string, change: ChangeKind, oldText: string, newText: string): string {
  return createTwoFilesPatch(
    change === "added" ? "/dev/null" : `a/${path}`,
    change === "deleted" ? "/dev/null" : `b/${path}`,
    oldText,
    newText,
    undefined,
    undefined,
    { context: 3 },
  ).replace(/^=+\n/, "");
}

/** How many times a guarded read-modify-write runs when other writers keep winning. */
const GUARDED_ATTEMPTS = 16;

export class ConfigStore {
  private readonly snapshots = new Map<string, Snapshot>();
  /** The parsed working tree, or null until first read; edits since then wait in `dirtyPaths`. */
  private worktreeSnapshot: Snapshot | null = null;
  /** The version and text of every file `worktreeSnapshot` was built from. */
  private worktreeFiles = new Map<string, FileVersion>();
  private readonly dirtyPaths = new Set<string>();
  /** Set when edits may have been missed (the change feed resynced): the next read rebuilds the whole tree. */
  private allDirty = false;
  private refreshing: Promise<void> | null = null;
  /** Guarded read-modify-writes, one at a time (see `guarded`). */
  private readonly editing = new KeyedLock();
  private readonly unwatch: () => void;

  constructor(
    private readonly store: Store,
    readonly repo: ConfigRepo,
  ) {
    this.unwatch = store.watch(
      (changes) => {
        for (const change of changes) if (change.collection === WORKTREE) this.dirtyPaths.add(change.id);
      },
      () => (this.allDirty = true),
    );
  }

  close(): void {
    this.unwatch();
  }

  /** One pipeline's canvas positions (pipeline-layout.ts), kept outside the git tree. */
  async layout(pipelineId: string): Promise<PipelineLayout | undefined> {
    return (await this.store.get<PipelineLayout>(LAYOUTS, pipelineId))?.data;
  }

  async layouts(): Promise<Map<string, PipelineLayout>> {
    return new Map((await this.store.list<PipelineLayout>(LAYOUTS)).map((doc) => [doc.id, doc.data]));
  }

  head(): Promise<string | null> {
    return this.repo.head();
  }

  /**
   * The parsed records of the working tree (pending edits included). Only
   * the files changed since the last call are re-read, into a fresh copy, so
   * a snapshot a caller holds never changes under it.
   */
  async worktree(): Promise<Snapshot> {
    return (await this.read()).snapshot;
  }

  /**
   * The working tree with the version of every file. `fresh` reads it all in
   * one list (one statement, so one consistent moment) instead of the cache
   * kept current by the change feed: a write whose check is that nothing
   * refers to a record (a delete, a deactivation, a pipeline change that must
   * not break a route) needs every file as of one moment, which a cache
   * filled file by file cannot promise.
   */
  async read(fresh = false): Promise<Worktree> {
    if (fresh) return new Worktree(...(await this.readAll()));
    while (this.refreshing) await this.refreshing;
    if (this.worktreeSnapshot === null || this.dirtyPaths.size > 0 || this.allDirty) {
      this.refreshing = this.refresh().finally(() => (this.refreshing = null));
      await this.refreshing;
    }
    return new Worktree(this.worktreeSnapshot!, this.worktreeFiles);
  }

  /**
   * Runs a read-modify-write until its guarded write lands: `change` reads
   * (fresh when its checks need one moment, see `read`), decides and writes
   * with the versions it read; when another writer won, it runs again on a
   * fresh read, so its checks see what won. A write that keeps losing is a
   * 409 version_conflict; nothing unacknowledged is ever reported stored.
   *
   * On this replica they run one at a time. Run together, N edits of one
   * file (20 activations on one collector) each lost to every winner before
   * them: about N²/2 attempts, each losing one queued behind the others on
   * the document's lock on PostgreSQL (17–22 s for 20), and the last ones
   * ran out of attempts (409). One at a time, each reads what the one before
   * wrote, and only another replica's edit can make one run again.
   */
  async guarded<T>(change: (tree: Worktree) => Promise<T>, fresh = false): Promise<T> {
    return this.editing.run("worktree", async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await change(await this.read(fresh || attempt > 1));
        } catch (error) {
          if (!(error instanceof ConflictError && error.code === "version_conflict") || attempt >= GUARDED_ATTEMPTS) throw error;
          this.allDirty = true; // the cache missed what won
          await Bun.sleep(Math.random() * 5 * attempt);
        }
      }
    });
  }

  private async refresh(): Promise<void> {
    const dirty = [...this.dirtyPaths];
    this.dirtyPaths.clear();
    if (this.allDirty) {
      this.allDirty = false;
      this.worktreeSnapshot = null;
    }
    try {
      [this.worktreeSnapshot, this.worktreeFiles] = await this.rebuild(dirty);
    } catch (error) {
      this.worktreeSnapshot = null; // read everything again next time
      throw error;
    }
  }

  private async readAll(): Promise<[Snapshot, Map<string, FileVersion>]> {
    const snapshot = emptySnapshot();
    const files = new Map<string, FileVersion>();
    for (const doc of await this.store.list<WorktreeFile>(WORKTREE)) {
      addToSnapshot(snapshot, doc.id, doc.data.text);
      files.set(doc.id, { version: doc.version, text: doc.data.text });
    }
    return [snapshot, files];
  }

  private async rebuild(dirty: string[]): Promise<[Snapshot, Map<string, FileVersion>]> {
    if (this.worktreeSnapshot === null) return this.readAll();
    const next = copySnapshot(this.worktreeSnapshot);
    const files = new Map(this.worktreeFiles);
    // One read for all of them: an edit writes a record and keeps those it depends on.
    const docs = await this.store.getMany<WorktreeFile>(WORKTREE, dirty);
    for (const path of dirty) {
      const doc = docs.get(path);
      removeFromSnapshot(next, path);
      files.delete(path);
      if (doc) {
        addToSnapshot(next, path, doc.data.text);
        files.set(path, { version: doc.version, text: doc.data.text });
      }
    }
    return [next, files];
  }

  /** Every working-tree file's text, path → text, read in one list. */
  async files(): Promise<Map<string, string>> {
    return new Map((await this.store.list<WorktreeFile>(WORKTREE)).map((doc) => [doc.id, doc.data.text]));
  }

  /** The parsed records of a commit (cached: commits never change). */
  async snapshotAt(commit: string): Promise<Snapshot> {
    let snapshot = this.snapshots.get(commit);
    if (!snapshot) {
      snapshot = emptySnapshot();
      for (const [path, oid] of await this.repo.tree(commit)) addToSnapshot(snapshot, path, await this.repo.read(oid));
      this.snapshots.set(commit, snapshot);
    }
    return snapshot;
  }

  /** Applies file edits and their audit entries in one atomic write. */
  async edit(edits: Edit[], audit: AuditEntry[], extra: WriteOp[] = []): Promise<void> {
    const ops: WriteOp[] = edits.map((edit) =>
      edit.text === null
        ? { op: "delete", collection: WORKTREE, id: edit.path, expect: edit.expect === "absent" ? undefined : edit.expect }
        : { op: "put", collection: WORKTREE, id: edit.path, data: { text: edit.text, oid: blobId(edit.text) } satisfies WorktreeFile, expect: edit.expect },
    );
    await this.store.write([...ops, ...extra], audit);
  }

  private async pending(): Promise<{ head: string | null; changes: Map<string, string | null>; items: FileChange[]; versions: Map<string, number> }> {
    const head = await this.repo.head();
    const committed = await this.repo.tree(head);
    const changes = new Map<string, string | null>();
    const items: FileChange[] = [];
    const versions = new Map<string, number>();
    for (const doc of await this.store.list<WorktreeFile>(WORKTREE)) {
      versions.set(doc.id, doc.version);
      const before = committed.get(doc.id);
      if (before === doc.data.oid) continue;
      changes.set(doc.id, doc.data.text);
      items.push({ path: doc.id, change: before === undefined ? "added" : "modified" });
    }
    for (const path of committed.keys()) {
      if (versions.has(path)) continue;
      changes.set(path, null);
      items.push({ path, change: "deleted" });
    }
    items.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { head, changes, items, versions };
  }

  /**
   * Pending changes with a unified diff of all of them; each item names its
   * record from the working tree, or from the head for a deleted one.
   */
  async changes(collectors: CollectorNames = noCollectorNames): Promise<{ items: FileChange[]; diff: string }> {
    const { head, changes, items } = await this.pending();
    const committed = await this.repo.tree(head);
    let diff = "";
    for (const { path, change } of items) {
      const oldText = change === "added" ? "" : await this.repo.read(committed.get(path)!);
      diff += filePatch(path, change, oldText, changes.get(path) ?? "");
    }
    const snapshots = [await this.worktree(), head === null ? emptySnapshot() : await this.snapshotAt(head)];
    return { items: await nameFiles(items, snapshots, collectors), diff };
  }

  /**
   * One commit of this repository: the files it changed against its parent
   * (all of them for the first), their unified diff, and each file's record
   * named as of that commit (a deleted one as of its parent). 404 for an id
   * that is not a commit here.
   */
  async commitDiff(commit: string, collectors: CollectorNames = noCollectorNames): Promise<CommitInfo & { items: FileChange[]; diff: string }> {
    const info = /^[0-9a-f]{40}$/.test(commit) ? (await this.repo.log(commit, 1).catch(() => []))[0] : undefined;
    if (!info || info.commit !== commit) throw new NotFoundError("Commit", commit);
    const [before, after] = [await this.repo.tree(info.parent), await this.repo.tree(commit)];
    const items: FileChange[] = [];
    for (const [path, oid] of after) {
      const old = before.get(path);
      if (old !== oid) items.push({ path, change: old === undefined ? "added" : "modified" });
    }
    for (const path of before.keys()) if (!after.has(path)) items.push({ path, change: "deleted" });
    items.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    let diff = "";
    for (const { path, change } of items) {
      const oldText = change === "added" ? "" : await this.repo.read(before.get(path)!);
      const newText = change === "deleted" ? "" : await this.repo.read(after.get(path)!);
      diff += filePatch(path, change, oldText, newText);
    }
    const snapshots = [await this.snapshotAt(commit), info.parent === null ? emptySnapshot() : await this.snapshotAt(info.parent)];
    return { ...info, items: await nameFiles(items, snapshots, collectors), diff };
  }

  /** Commits every pending change; 409 nothing_to_commit when there is none. */
  async commit(who: Actor & { name?: string }, message: string, now = new Date()): Promise<CommitResult> {
    const { head, changes, items } = await this.pending();
    if (items.length === 0) throw new ConflictError("There are no pending changes to commit.", "nothing_to_commit");
    const email = `${who.actor.replace(/[^A-Za-z0-9._-]/g, "-")}@svc.invalid`;
    const audit = (commit: CommitInfo) => [
      auditEntry(who, "config.commit", "commit", commit.commit, { message: commit.message, files: items.length }, "success", now),
    ];
    const { audited, ...info } = await this.repo.commit(head, changes, message, { name: who.actor, email }, now, audit);
    if (!audited) await this.store.write([], audit(info));
    return { ...info, files: items };
  }

  /**
   * Drops every pending change: the working tree becomes the head commit
   * again. Guarded by the versions listed, so an edit landing meanwhile is a
   * 409 rather than half undone (it could refer to a record this deletes).
   */
  async discard(who: Actor): Promise<FileChange[]> {
    const { head, changes, items, versions } = await this.pending();
    if (items.length === 0) return [];
    const committed = await this.repo.tree(head);
    const edits: Edit[] = [];
    for (const path of changes.keys()) {
      const oid = committed.get(path);
      edits.push({ path, text: oid === undefined ? null : await this.repo.read(oid), expect: versions.get(path) ?? "absent" });
    }
    await this.edit(edits, [auditEntry(who, "config.discard", "worktree", null, { files: items.length })]);
    return items;
  }

  /** The whole history as a git bundle, audited; 409 no_history before the first commit. */
  async exportBundle(who: Actor): Promise<{ head: string; bundle: Uint8Array<ArrayBuffer> }> {
    const packed = await this.repo.pack();
    if (packed === null) throw new ConflictError("Nothing has been committed yet, so there is no history to export.", "no_history");
    const bundle = gitBundle(packed.head, packed.packfile);
    await this.store.write([], [auditEntry(who, "config.export", "commit", packed.head, { bytes: bundle.length })]);
    return { head: packed.head, bundle };
  }

  /** History newest first; `before` is a commit id whose ancestors come next. */
  async commits(limit: number, before?: string): Promise<{ items: CommitInfo[]; nextCursor: string | null }> {
    let start: string | null;
    if (before === undefined) {
      start = await this.repo.head();
    } else {
      const known = /^[0-9a-f]{40}$/.test(before) && (await this.repo.log(before, 1).catch(() => []))[0];
      if (!known) throw new ValidationError("The cursor is not a commit of this history.", [{ path: "cursor", message: "unknown commit" }]);
      start = known.parent;
    }
    if (start === null) return { items: [], nextCursor: null };
    const items = await this.repo.log(start, limit + 1);
    const more = items.length > limit;
    if (more) items.pop();
    return { items, nextCursor: more ? items[items.length - 1]!.commit : null };
  }
}
