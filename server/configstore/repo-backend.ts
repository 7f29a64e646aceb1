/**
 * What ConfigRepo needs from where its history lives: an `fs` isomorphic-git
 * reads and writes objects through, the branch head, and an atomic step that
 * makes a commit's new objects durable and moves the branch. Two backends:
 * a bare repository on disk (repo-disk.ts) and documents of a Store
 * (repo-store.ts).
 */
import type { PromiseFsClient } from "isomorphic-git";
import { ConflictError } from "../errors.ts";
import type { AuditEntry } from "../store/store.ts";

export const BRANCH = "main";
export const REF = `refs/heads/${BRANCH}`;
/** Where refs kept beside the branch live, e.g. the head a history rewrite replaced (refs/svc/before-purge-…). */
export const KEPT_REFS = "refs/svc/";

/** Answers every object the given commits reach (their commits, trees and blobs). */
export type Reachable = (heads: string[]) => Promise<Set<string>>;

export interface RepoBackend {
  readonly fs: PromiseFsClient;
  /** The gitdir to hand isomorphic-git along with `fs`. */
  readonly gitdir: string;
  /** How many object writes a commit keeps in flight at once. */
  readonly objectWriters: number;
  /** The branch head, or null before the first commit; read fresh each call (another replica may move it). */
  head(): Promise<string | null>;
  /**
   * Makes every object written through `fs` since the last call durable and
   * moves the branch from `parent` to `commit`, all or nothing. Throws
   * ConflictError("head_moved") when the branch is no longer at `parent`.
   * Answers whether `audit` was stored in that same step (the store backend);
   * false leaves it to the caller (on disk, git and the state file cannot
   * share a transaction).
   */
  advance(parent: string | null, commit: string, audit: AuditEntry[]): Promise<boolean>;
  /** Forgets the objects written since the last `advance`: the commit writing them failed. */
  abandon(): void;
  /** The kept refs (full names under KEPT_REFS) and the commits they name. */
  keptRefs(): Promise<Map<string, string>>;
  /**
   * `advance`, and the kept ref `keep.ref` created at `keep.oid` (which the
   * branch reached before), so that commit stays readable: one atomic step in
   * the store; on disk the kept ref is written first, so a crash between
   * leaves it naming a commit the branch still reaches.
   */
  replace(parent: string, commit: string, keep: { ref: string; oid: string }, audit: AuditEntry[]): Promise<boolean>;
  /**
   * Deletes the kept ref `ref` (with `audit`, in the store), then every
   * object that neither the branch nor another kept ref reaches, so what
   * only `ref` reached is gone from the repository. Answers how many objects
   * went and whether `audit` was stored (false leaves it to the caller).
   */
  dropRef(ref: string, reachable: Reachable, audit: AuditEntry[]): Promise<{ deleted: number; audited: boolean }>;
}

/** The branch is no longer where a commit started from: another commit (maybe on another replica) won. */
export function headMoved(): ConflictError {
  return new ConflictError("The configuration history moved while committing; review the changes and commit again.", "head_moved");
}
