/**
 * The git-backed configuration store. The working tree is every file of the
 * current configuration, held in the Store (so an edit and its audit entry
 * land in one atomic write); pending changes are the working tree against the
 * head commit; `commit` turns them into a git commit. Publishing reads commits
 * only, so an edit never reaches a collector before someone commits it.
 */
import { createTwoFilesPatch } from "diff";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError, ValidationError } from "../errors.ts";
import type { AuditEntry, Store, WriteOp } from "../store/store.ts";
import { addToSnapshot, blobId, copySnapshot, emptySnapshot, removeFromSnapshot, type Snapshot } from "./layout.ts";
import { gitBundle } from "./bundle.ts";
import type { CommitInfo, ConfigRepo } from "./repo.ts";

const WORKTREE = "worktree";

interface WorktreeFile {
  text: string;
  /** The git blob id of `text`, kept so comparing with a commit needs no blob reads. */
  oid: string;
}

export type ChangeKind = "added" | "modified" | "deleted";

export interface FileChange {
  path: string;
  change: ChangeKind;
}

/** One file edit: new text, or null to delete; `expect` guards it like a Store write. */
export interface Edit {
  path: string;
  text: string | null;
  expect?: number | "absent" | "present";
}

export interface CommitResult extends CommitInfo {
  files: FileChange[];
}

export class ConfigStore {
  private readonly snapshots = new Map<string, Snapshot>();
  /** The parsed working tree, or null until first read; edits since then wait in `dirtyPaths`. */
  private worktreeSnapshot: Snapshot | null = null;
  private readonly dirtyPaths = new Set<string>();
  /** Set when edits may have been missed (the change feed resynced): the next read rebuilds the whole tree. */
  private allDirty = false;
  private refreshing: Promise<void> | null = null;
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

  head(): Promise<string | null> {
    return this.repo.head();
  }

  /**
   * The parsed records of the working tree (pending edits included). Only
   * the files changed since the last call are re-read, into a fresh copy, so
   * a snapshot a caller holds never changes under it.
   */
  async worktree(): Promise<Snapshot> {
    while (this.refreshing) await this.refreshing;
    if (this.worktreeSnapshot !== null && this.dirtyPaths.size === 0 && !this.allDirty) return this.worktreeSnapshot;
    this.refreshing = this.refresh().finally(() => (this.refreshing = null));
    await this.refreshing;
    return this.worktreeSnapshot!;
  }

  private async refresh(): Promise<void> {
    const dirty = [...this.dirtyPaths];
    this.dirtyPaths.clear();
    if (this.allDirty) {
      this.allDirty = false;
      this.worktreeSnapshot = null;
    }
    try {
      this.worktreeSnapshot = await this.rebuild(dirty);
    } catch (error) {
      this.worktreeSnapshot = null; // read everything again next time
      throw error;
    }
  }

  private async rebuild(dirty: string[]): Promise<Snapshot> {
    let next: Snapshot;
    if (this.worktreeSnapshot === null) {
      next = emptySnapshot();
      for (const doc of await this.store.list<WorktreeFile>(WORKTREE)) addToSnapshot(next, doc.id, doc.data.text);
    } else {
      next = copySnapshot(this.worktreeSnapshot);
      for (const path of dirty) {
        const doc = await this.store.get<WorktreeFile>(WORKTREE, path);
        removeFromSnapshot(next, path);
        if (doc) addToSnapshot(next, path, doc.data.text);
      }
    }
    return next;
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

  /** The current version of a working-tree file, for guarding an edit; null when absent. */
  async version(path: string): Promise<number | null> {
    return (await this.store.get(WORKTREE, path))?.version ?? null;
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

  private async pending(): Promise<{ head: string | null; changes: Map<string, string | null>; items: FileChange[] }> {
    const head = await this.repo.head();
    const committed = await this.repo.tree(head);
    const changes = new Map<string, string | null>();
    const items: FileChange[] = [];
    const seen = new Set<string>();
    for (const doc of await this.store.list<WorktreeFile>(WORKTREE)) {
      seen.add(doc.id);
      const before = committed.get(doc.id);
      if (before === doc.data.oid) continue;
      changes.set(doc.id, doc.data.text);
      items.push({ path: doc.id, change: before === undefined ? "added" : "modified" });
    }
    for (const path of committed.keys()) {
      if (seen.has(path)) continue;
      changes.set(path, null);
      items.push({ path, change: "deleted" });
    }
    items.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { head, changes, items };
  }

  /** Pending changes with a unified diff of all of them. */
  async changes(): Promise<{ items: FileChange[]; diff: string }> {
    const { head, changes, items } = await this.pending();
    const committed = await this.repo.tree(head);
    let diff = "";
    for (const { path, change } of items) {
      const oldText = change === "added" ? "" : await this.repo.read(committed.get(path)!);
      const newText = changes.get(path) ?? "";
      diff += createTwoFilesPatch(
        change === "added" ? "/dev/null" : `a/${path}`,
        change === "deleted" ? "/dev/null" : `b/${path}`,
        oldText,
        newText,
        undefined,
        undefined,
        { context: 3 },
      ).replace(/^=+\n/, "");
    }
    return { items, diff };
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

  /** Drops every pending change: the working tree becomes the head commit again. */
  async discard(who: Actor): Promise<FileChange[]> {
    const { head, changes, items } = await this.pending();
    if (items.length === 0) return [];
    const committed = await this.repo.tree(head);
    const edits: Edit[] = [];
    for (const path of changes.keys()) {
      const oid = committed.get(path);
      edits.push({ path, text: oid === undefined ? null : await this.repo.read(oid) });
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
