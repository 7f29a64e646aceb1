/**
 * Embedded Store adapter on bun:sqlite: one file at storage.boltPath, WAL
 * journal and synchronous=FULL so an acknowledged write survives kill -9 and
 * power loss. Single instance only; the change feed is in-process.
 */
import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ConflictError, InsufficientStorageError } from "../errors.ts";
import { checkGuard } from "./guard.ts";
import type { AuditEntry, AuditQuery, Change, ChangeListener, Doc, ListOptions, Store, WriteOp } from "./store.ts";

/** Append-only: a released migration is never edited, only followed by a new one. */
const MIGRATIONS: string[] = [
  `CREATE TABLE docs (
     collection TEXT NOT NULL,
     id TEXT NOT NULL,
     version INTEGER NOT NULL,
     data TEXT NOT NULL,
     updated_at TEXT NOT NULL,
     PRIMARY KEY (collection, id)
   ) WITHOUT ROWID;
   CREATE TABLE audit (
     id TEXT PRIMARY KEY,
     time TEXT NOT NULL,
     actor TEXT NOT NULL,
     action TEXT NOT NULL,
     entry TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX audit_time ON audit (time);`,
  // Documents of a few KiB (collector records, rendered configs) made the clustered WITHOUT ROWID tree a few rows a
  // page: every lookup and insert went through pages the 2 MiB cache could not hold. A rowid table keeps the key
  // index small: a publish's writes took a third of the time, a presence flush an eighth (BENCHMARKS.md, issue 36).
  `CREATE TABLE docs_by_rowid (
     collection TEXT NOT NULL,
     id TEXT NOT NULL,
     version INTEGER NOT NULL,
     data TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   INSERT INTO docs_by_rowid (collection, id, version, data, updated_at)
     SELECT collection, id, version, data, updated_at FROM docs ORDER BY collection, id;
   DROP TABLE docs;
   ALTER TABLE docs_by_rowid RENAME TO docs;
   CREATE UNIQUE INDEX docs_key ON docs (collection, id);`,
];

interface DocRow {
  id: string;
  version: number;
  data: string;
  updated_at: string;
}

/** The smallest string greater than every string starting with `prefix`. */
function prefixEnd(prefix: string): string {
  return prefix + "\u{10FFFF}";
}

export class SqliteStore implements Store {
  readonly backend = "embedded";
  private readonly db: Database;
  private readonly listeners = new Set<ChangeListener>();
  private readonly getStmt: Statement<DocRow, [string, string]>;
  /** A write's guard needs the version alone: reading the data too copied every written document's old JSON out (overflow pages and all). */
  private readonly versionStmt: Statement<{ version: number }, [string, string]>;
  private readonly putStmt: Statement<unknown, [string, string, number, string, string]>;
  private readonly deleteStmt: Statement<unknown, [string, string]>;
  private readonly auditStmt: Statement<unknown, [string, string, string, string, string]>;
  private readonly countStmt: Statement<{ n: number }, [string]>;
  private closed = false;

  constructor(readonly path: string) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path, { create: true, strict: true });
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = FULL");
    this.db.run("PRAGMA busy_timeout = 5000");
    this.db.run("PRAGMA foreign_keys = ON");
    this.migrate();
    this.getStmt = this.db.query("SELECT id, version, data, updated_at FROM docs WHERE collection = ? AND id = ?");
    this.versionStmt = this.db.query("SELECT version FROM docs WHERE collection = ? AND id = ?");
    this.putStmt = this.db.query(
      "INSERT INTO docs (collection, id, version, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) " +
        "ON CONFLICT (collection, id) DO UPDATE SET version = ?3, data = ?4, updated_at = ?5",
    );
    this.deleteStmt = this.db.query("DELETE FROM docs WHERE collection = ? AND id = ?");
    this.auditStmt = this.db.query("INSERT INTO audit (id, time, actor, action, entry) VALUES (?, ?, ?, ?, ?)");
    this.countStmt = this.db.query("SELECT count(*) AS n FROM docs WHERE collection = ?");
  }

  private migrate(): void {
    this.db.run("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    const row = this.db.query<{ v: number | null }, []>("SELECT max(version) AS v FROM schema_migrations").get();
    const current = row?.v ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(`The state file ${this.path} has schema version ${current}, newer than this server knows (${MIGRATIONS.length}); upgrade the server.`);
    }
    for (let version = current + 1; version <= MIGRATIONS.length; version++) {
      this.db.transaction(() => {
        this.db.run(MIGRATIONS[version - 1]!);
        this.db.run("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", [version, new Date().toISOString()]);
      })();
    }
  }

  private toDoc<T>(collection: string, row: DocRow): Doc<T> {
    return { collection, id: row.id, version: row.version, data: JSON.parse(row.data) as T, updatedAt: row.updated_at };
  }

  async get<T>(collection: string, id: string): Promise<Doc<T> | null> {
    const row = this.getStmt.get(collection, id);
    return row ? this.toDoc<T>(collection, row) : null;
  }

  async getMany<T>(collection: string, ids: readonly string[]): Promise<Map<string, Doc<T>>> {
    const found = new Map<string, Doc<T>>();
    for (const id of ids) {
      const row = this.getStmt.get(collection, id);
      if (row) found.set(id, this.toDoc<T>(collection, row));
    }
    return found;
  }

  async list<T>(collection: string, options: ListOptions = {}): Promise<Doc<T>[]> {
    const where = ["collection = ?"];
    const params: (string | number)[] = [collection];
    if (options.prefix !== undefined) {
      where.push("id >= ?", "id < ?");
      params.push(options.prefix, prefixEnd(options.prefix));
    }
    if (options.after !== undefined) {
      where.push("id > ?");
      params.push(options.after);
    }
    let sql = `SELECT id, version, data, updated_at FROM docs WHERE ${where.join(" AND ")} ORDER BY id`;
    if (options.limit !== undefined) {
      sql += " LIMIT ?";
      params.push(options.limit);
    }
    return this.db
      .query<DocRow, (string | number)[]>(sql)
      .all(...params)
      .map((row) => this.toDoc<T>(collection, row));
  }

  async count(collection: string): Promise<number> {
    return this.countStmt.get(collection)?.n ?? 0;
  }

  async write(ops: WriteOp[], audit: AuditEntry[] = []): Promise<Doc[]> {
    const now = new Date().toISOString();
    const written: Doc[] = [];
    const changes: Change[] = [];
    this.writing(() =>
      this.db.transaction(() => {
        for (const op of ops) {
          const current = this.versionStmt.get(op.collection, op.id);
          checkGuard(op, current?.version ?? null);
          if (op.op === "put") {
            const version = (current?.version ?? 0) + 1;
            this.putStmt.run(op.collection, op.id, version, JSON.stringify(op.data), now);
            written.push({ collection: op.collection, id: op.id, version, data: op.data, updatedAt: now });
            changes.push({ collection: op.collection, id: op.id, version, op: "put", data: op.data });
          } else if (current) {
            this.deleteStmt.run(op.collection, op.id);
            changes.push({ collection: op.collection, id: op.id, version: 0, op: "delete" });
          }
        }
        for (const entry of audit) {
          this.auditStmt.run(entry.id, entry.time, entry.actor, entry.action, JSON.stringify(entry));
        }
      })(),
    );
    if (changes.length > 0) this.emit(changes, Date.now());
    return written;
  }

  /**
   * Runs a write; a full disk (SQLITE_FULL, or an I/O error that is ENOSPC)
   * becomes 507 storage_full. SQLite rolls the transaction back, so nothing of
   * it is kept, and the next write succeeds once space is freed.
   */
  private writing<T>(write: () => T): T {
    try {
      return write();
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      if (code === "SQLITE_FULL" || /\bENOSPC\b|disk is full/i.test((error as Error).message)) {
        throw new InsufficientStorageError("the embedded state file (storage.boltPath)");
      }
      throw error;
    }
  }

  private emit(changes: Change[], committedAt: number): void {
    for (const listener of this.listeners) listener(changes, committedAt);
  }

  async queryAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const add = (clause: string, value: string | undefined) => {
      if (value === undefined) return;
      where.push(clause);
      params.push(value);
    };
    add("time >= ?", query.from);
    add("time < ?", query.to);
    add("actor = ?", query.actor);
    add("action = ?", query.action);
    add("id < ?", query.before);
    params.push(query.limit);
    const sql = "SELECT entry FROM audit" + (where.length ? ` WHERE ${where.join(" AND ")}` : "") + " ORDER BY id DESC LIMIT ?";
    return this.db
      .query<{ entry: string }, (string | number)[]>(sql)
      .all(...params)
      .map((row) => JSON.parse(row.entry) as AuditEntry);
  }

  async pruneAudit(before: string): Promise<number> {
    return this.writing(() => this.db.run("DELETE FROM audit WHERE time < ?", [before]).changes);
  }

  async collections(): Promise<string[]> {
    return this.db
      .query<{ collection: string }, []>("SELECT DISTINCT collection FROM docs ORDER BY collection")
      .all()
      .map((row) => row.collection);
  }

  async restore(docs: Doc[], audit: AuditEntry[]): Promise<void> {
    const insert = this.db.query<unknown, [string, string, number, string, string]>(
      "INSERT INTO docs (collection, id, version, data, updated_at) VALUES (?, ?, ?, ?, ?)",
    );
    try {
      this.db.transaction(() => {
        for (const doc of docs) insert.run(doc.collection, doc.id, doc.version, JSON.stringify(doc.data), doc.updatedAt);
        for (const entry of audit) this.auditStmt.run(entry.id, entry.time, entry.actor, entry.action, JSON.stringify(entry));
      })();
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith("SQLITE_CONSTRAINT")) {
        throw new ConflictError(`The target already holds a record being restored: ${(error as Error).message}`, "restore_conflict");
      }
      throw error;
    }
  }

  watch(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** One process writes, and tells its listeners before the write returns: nothing is ever in flight. */
  async sync(): Promise<void> {
    if (this.closed) throw new Error("the embedded store is closed");
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error("the embedded store is closed");
    this.db.query("SELECT 1").get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    this.db.close();
  }
}
