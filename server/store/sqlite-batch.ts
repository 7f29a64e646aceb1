/**
 * The embedded store's writes as SQLite runs them, wherever that is: on the
 * server's thread (a `:memory:` database, which no other thread can open) or
 * on the writer thread (sqlite-writer.ts). A batch is several writes committed
 * together (group commit: one fsync for all of them); each write is still
 * atomic on its own, in a savepoint: a guard that fails rolls back that write
 * alone and the others commit.
 *
 * Documents arrive already serialized (JSON text): the caller keeps the
 * objects, and what crosses to the writer thread is strings.
 */
import type { Database, Statement } from "bun:sqlite";
import { ConflictError, InsufficientStorageError } from "../errors.ts";
import { checkGuard } from "./guard.ts";
import type { WriteOp } from "./store.ts";

/** A WriteOp with its document as JSON text. */
export type EncodedOp = Omit<WriteOp, "data"> & { data?: string };

/** An audit entry as its row holds it. */
export interface EncodedAudit {
  id: string;
  time: string;
  actor: string;
  action: string;
  entry: string;
}

/** One `Store.write`: its operations and audit entries, and the time stamped on what it writes. */
export interface EncodedWrite {
  ops: EncodedOp[];
  audit: EncodedAudit[];
  now: string;
}

/** Per operation: the version a put wrote, 0 for a delete that removed a document, -1 for a delete of nothing. */
export type WriteOutcome = { ok: true; versions: number[] } | { ok: false; error: WriteFailure };

/** A refusal as it crosses threads; `refusal` turns it back into the error the caller gets. */
export type WriteFailure = { kind: "conflict"; message: string; code: string } | { kind: "full" } | { kind: "failed"; message: string };

interface DocRow {
  version: number;
}

export interface Statements {
  version: Statement<DocRow, [string, string]>;
  put: Statement<unknown, [string, string, number, string, string]>;
  delete: Statement<unknown, [string, string]>;
  audit: Statement<unknown, [string, string, string, string, string]>;
}

export function prepare(db: Database): Statements {
  return {
    version: db.query("SELECT version FROM docs WHERE collection = ? AND id = ?"),
    put: db.query(
      "INSERT INTO docs (collection, id, version, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) " +
        "ON CONFLICT (collection, id) DO UPDATE SET version = ?3, data = ?4, updated_at = ?5",
    ),
    delete: db.query("DELETE FROM docs WHERE collection = ? AND id = ?"),
    audit: db.query("INSERT INTO audit (id, time, actor, action, entry) VALUES (?, ?, ?, ?, ?)"),
  };
}

/** Applies one write inside the open transaction; throws ConflictError when a guard fails. */
function apply(stmts: Statements, write: EncodedWrite): number[] {
  const versions: number[] = [];
  for (const op of write.ops) {
    const current = stmts.version.get(op.collection, op.id)?.version ?? null;
    checkGuard(op, current);
    if (op.op === "put") {
      const version = (current ?? 0) + 1;
      stmts.put.run(op.collection, op.id, version, op.data!, write.now);
      versions.push(version);
    } else if (current !== null) {
      stmts.delete.run(op.collection, op.id);
      versions.push(0);
    } else {
      versions.push(-1);
    }
  }
  for (const entry of write.audit) stmts.audit.run(entry.id, entry.time, entry.actor, entry.action, entry.entry);
  return versions;
}

/** A failure as it crosses threads: a full disk, a failed guard, or anything else by its message. */
export function failureOf(error: unknown): WriteFailure {
  const code = (error as { code?: string }).code ?? "";
  if (code === "SQLITE_FULL" || /\bENOSPC\b|disk is full/i.test((error as Error).message)) return { kind: "full" };
  if (error instanceof ConflictError) return { kind: "conflict", message: error.message, code: error.code };
  return { kind: "failed", message: error instanceof Error ? error.message : String(error) };
}

/** The error a caller gets for a failure: a full disk is 507 storage_full; SQLite rolled the write back, so nothing of it is kept. */
export function refusal(failure: WriteFailure): Error {
  if (failure.kind === "full") return new InsufficientStorageError("the embedded state file (storage.boltPath)");
  if (failure.kind === "conflict") return new ConflictError(failure.message, failure.code);
  return new Error(`The embedded store could not write: ${failure.message}`);
}

/**
 * Commits `writes` in one transaction, each in its own savepoint, and answers
 * each one's outcome. Anything but a failed guard (a full disk, an I/O error)
 * rolls the whole transaction back, and each write is then tried alone, so
 * one write's failure is never another's.
 */
export function commitBatch(db: Database, stmts: Statements, writes: readonly EncodedWrite[]): WriteOutcome[] {
  if (writes.length > 1) {
    try {
      return db.transaction(() =>
        writes.map((write): WriteOutcome => {
          db.run("SAVEPOINT w");
          try {
            const versions = apply(stmts, write);
            db.run("RELEASE w");
            return { ok: true, versions };
          } catch (error) {
            if (!(error instanceof ConflictError)) throw error;
            db.run("ROLLBACK TO w");
            db.run("RELEASE w");
            return { ok: false, error: failureOf(error) };
          }
        }),
      )();
    } catch {
      // Rolled back as a whole: each alone below says whose failure it was.
    }
  }
  return writes.map((write) => {
    try {
      return { ok: true, versions: db.transaction(() => apply(stmts, write))() };
    } catch (error) {
      return { ok: false, error: failureOf(error) };
    }
  });
}
