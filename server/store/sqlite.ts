/**
 * Embedded Store adapter on bun:sqlite: one file at storage.boltPath, WAL
 * journal and synchronous=FULL so an acknowledged write survives kill -9 and
 * power loss. Single instance only; the change feed is in-process. Reads run
 * on the caller's thread; the server's writes on a writer thread by group
 * commit (sqlite-writer.ts).
 */
import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { ConflictError } from "../errors.ts";
import { failureOf, refusal, type EncodedWrite } from "./sqlite-batch.ts";
import { InlineWriter, ThreadWriter, type Writer } from "./sqlite-writer.ts";
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
  private readonly auditStmt: Statement<unknown, [string, string, string, string, string]>;
  private readonly writer: Writer;
  private readonly countStmt: Statement<{ n: number }, [string]>;
  private closed = false;

  /**
   * `writes: "thread"` commits on a writer thread (what the server does);
   * the default writes on this thread, as a maintenance command or a test
   * needs no second thread. A `:memory:` database always writes inline.
   */
  constructor(
    readonly path: string,
    options: { writes?: "thread" | "inline" } = {},
  ) {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path, { create: true, strict: true });
    this.db.run("PRAGMA journal_mode = WAL");
    this.db.run("PRAGMA synchronous = FULL");
    this.db.run("PRAGMA busy_timeout = 5000");
    this.db.run("PRAGMA foreign_keys = ON");
    this.migrate();
    this.getStmt = this.db.query("SELECT id, version, data, updated_at FROM docs WHERE collection = ? AND id = ?");
    this.auditStmt = this.db.query("INSERT INTO audit (id, time, actor, action, entry) VALUES (?, ?, ?, ?, ?)");
    this.countStmt = this.db.query("SELECT count(*) AS n FROM docs WHERE collection = ?");
    this.writer = options.writes === "thread" && path !== ":memory:" ? new ThreadWriter(path) : new InlineWriter(this.db);
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
    if (this.closed) throw new Error("the embedded store is closed");
    const now = new Date().toISOString();
    const write: EncodedWrite = {
      ops: ops.map((op) => (op.op === "put" ? { ...op, data: JSON.stringify(op.data) } : op)),
      audit: audit.map((entry) => ({ id: entry.id, time: entry.time, actor: entry.actor, action: entry.action, entry: JSON.stringify(entry) })),
      now,
    };
    const outcome = await this.writer.commit(write);
    if (!outcome.ok) throw refusal(outcome.error);
    const written: Doc[] = [];
    const changes: Change[] = [];
    ops.forEach((op, i) => {
      const version = outcome.versions[i]!;
      if (op.op === "put") {
        written.push({ collection: op.collection, id: op.id, version, data: op.data, updatedAt: now });
        changes.push({ collection: op.collection, id: op.id, version, op: "put", data: op.data });
      } else if (version === 0) {
        changes.push({ collection: op.collection, id: op.id, version: 0, op: "delete" });
      }
    });
    if (changes.length > 0) this.emit(changes, Date.now());
    return written;
  }

  /**
   * Runs a write on this thread (pruning the audit log); a full disk
   * (SQLITE_FULL, or an I/O error that is ENOSPC) becomes 507 storage_full.
   * SQLite rolls the transaction back, so nothing of it is kept, and the next
   * write succeeds once space is freed.
   */
  private writing<T>(write: () => T): T {
    try {
      return write();
    } catch (error) {
      if (failureOf(error).kind === "full") throw refusal({ kind: "full" });
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

  /** One process writes, and tells its listeners before a write returns: once every write asked for is answered, nothing is in flight. */
  async sync(): Promise<void> {
    if (this.closed) throw new Error("the embedded store is closed");
    await this.writer.drained();
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error("the embedded store is closed");
    this.db.query("SELECT 1").get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close();
    this.listeners.clear();
    this.db.close();
  }
}
