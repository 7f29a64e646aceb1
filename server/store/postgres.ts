/**
 * External Store adapter on PostgreSQL through Bun.sql. Any number of server
 * replicas share one database:
 * - documents are rows of `docs` (collection, id, version, data, updated_at);
 *   `data` is PostgreSQL `json`, the exact text of the document, so it
 *   round-trips like the embedded store (key order, "\u0000" and lone
 *   surrogates included, all of which `jsonb` would change or refuse); cast it
 *   to jsonb for ad-hoc queries.
 * - a write takes a transaction-scoped advisory lock per (collection, id) in
 *   sorted order, reads the current versions, checks every guard with the
 *   embedded store's checkGuard and applies the batch, so compare-and-swap
 *   holds across replicas, "absent" guards included (a row lock cannot lock a
 *   row that does not exist yet). It is acknowledged after COMMIT. Every
 *   write first holds the batch lock shared; a batch of more than
 *   MAX_DOCUMENT_LOCKS documents (a publish to a whole fleet) holds it
 *   exclusively instead of locking each document, because PostgreSQL's lock
 *   table (max_locks_per_transaction) cannot hold ten thousand locks.
 * - schema migrations run once, in one transaction, under an advisory lock;
 *   a database whose schema is newer than this server knows is refused.
 * - the change feed is LISTEN/NOTIFY on one channel: every write NOTIFYs in
 *   its own transaction (so only a commit is announced) a compact payload,
 *   split into parts under PostgreSQL's 8000-byte limit, and every replica's
 *   watchers hear every committed write, their own included, exactly once.
 *   A write resolves after its own announcement reached this replica's
 *   watchers, as with the embedded store (or after ECHO_TIMEOUT_MS, when the
 *   feed is slow or down; the watchers are then told to resync).
 * - Bun.sql's listen() keeps its connection alive and reconnects with
 *   backoff; notifications sent meanwhile are lost, so every reconnect calls
 *   the watchers' `onResync`.
 * - an unreachable database is an outage, not a crash: every operation then
 *   throws StorageUnavailableError (503 + Retry-After at the edge).
 *   `connect` returns a store that keeps trying to open in the background
 *   (backoff with jitter) and throws that error until it has. A write whose
 *   COMMIT got no answer asks PostgreSQL what became of its transaction id
 *   (pg_xact_status): committed is acknowledged, aborted is retried, and an
 *   outcome it cannot learn is reported as unknown, never as success, so a
 *   retried write cannot apply twice.
 */
import { SQL } from "bun";
import { ConflictError } from "../errors.ts";
import { type ConnectOptions as ExternalConnectOptions, ExternalStore } from "./external.ts";
import { checkGuard } from "./guard.ts";
import type { AuditEntry, AuditQuery, Change, Doc, ListOptions, Store, WriteOp } from "./store.ts";

/** The LISTEN/NOTIFY channel of the change feed. */
export const CHANGES_CHANNEL = "svc_changes";
/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; stay clearly under. */
const NOTIFY_LIMIT = 7900;
/** pg_advisory_xact_lock(int4, int4) key of the migration lock ("svc", 1); document locks use the int8 form, a separate key space. */
const MIGRATION_LOCK = "1937138531, 1";
/** pg_advisory_xact_lock(int4, int4) key ("svc", 2) every write holds: shared by small batches, exclusive by large ones. */
const BATCH_KEY = [1937138531, 2] as const;
const BATCH_LOCK = BATCH_KEY.join(", ");
/** A batch locking more documents than this takes the batch lock exclusively instead. */
const MAX_DOCUMENT_LOCKS = 64;
/** How long ping waits for what a write needs before the store counts as down (/readyz answers 503). */
const PING_DEADLINE_MS = 2000;

/** Append-only: a released migration is never edited, only followed by a new one. */
const MIGRATIONS: string[] = [
  `CREATE TABLE docs (
     collection text COLLATE "C" NOT NULL,
     id text COLLATE "C" NOT NULL,
     version bigint NOT NULL,
     data json NOT NULL,
     updated_at timestamptz NOT NULL,
     PRIMARY KEY (collection, id)
   );
   CREATE TABLE audit (
     id text COLLATE "C" PRIMARY KEY,
     time text COLLATE "C" NOT NULL,
     actor text NOT NULL,
     action text NOT NULL,
     entry json NOT NULL
   );
   CREATE INDEX audit_time ON audit (time);`,
];

/** Bun.sql error codes of a connection that went away (the query did not run, or its outcome is unknown). */
const CONNECTION_ERRORS = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
]);
/** SQLSTATEs of a session the server ended or could not start (admin shutdown, crash, starting up). */
const CONNECTION_STATES = new Set(["57P01", "57P02", "57P03", "08000", "08003", "08006"]);

function isConnectionError(error: unknown): boolean {
  const e = error as { code?: string; errno?: string; severity?: string } | null;
  // FATAL ends the session (refused at connect: database closed to connections, too many clients, ...).
  return !!e && (CONNECTION_ERRORS.has(e.code ?? "") || CONNECTION_STATES.has(e.errno ?? "") || e.severity === "FATAL" || e.severity === "PANIC");
}

const ATTEMPTS = 3;
/** Ids per query of getMany: one round trip each, and a bounded parameter. */
const GET_MANY_CHUNK = 1000;

export interface PostgresStoreOptions {
  /** The database to use when the URI names none (database.database). */
  database?: string;
  /** Pool size. */
  max?: number;
  /** Seconds to wait for a connection to open. */
  connectionTimeout?: number;
  /** NOTIFY payload limit in bytes (tests lower it). */
  notifyLimit?: number;
}

export interface ConnectOptions extends PostgresStoreOptions, ExternalConnectOptions {}

interface DocRow {
  id: string;
  version: string | number;
  data: string;
  updated_at: Date;
}

/**
 * One part of a write's announcement: w = write token, i/n = part i of n, c = [collection, id, version (0 = delete)],
 * o = some change did not fit, t = the writer's clock (ms) just before COMMIT (absent from older servers).
 */
interface NotifyPart {
  w: string;
  t?: number;
  i: number;
  n: number;
  c: [string, string, number][];
  o?: 1;
}

function prefixEnd(prefix: string): string {
  return prefix + "\u{10FFFF}";
}

function keyOf(collection: string, id: string): string {
  return `${collection}\u0000${id}`;
}

/** A signed 64-bit advisory-lock key for one document. */
function lockKey(key: string): bigint {
  return BigInt.asIntN(64, BigInt(Bun.hash.wyhash(key, 0x737663n)));
}

/** One version of one document, as a map key. */
function versionKey(collection: string, id: string, version: number): string {
  return `${keyOf(collection, id)}\u0000${version}`;
}

/** The announcement parts of one write, each under `limit` bytes. */
export function notifyParts(token: string, changes: Change[], limit = NOTIFY_LIMIT, time = Date.now()): string[] {
  const header = Buffer.byteLength(JSON.stringify({ w: token, t: time, i: 99999, n: 99999, c: [], o: 1 }));
  const groups: { c: [string, string, number][]; o?: 1 }[] = [{ c: [] }];
  let size = header;
  for (const change of changes) {
    const entry: [string, string, number] = [change.collection, change.id, change.version];
    const bytes = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (header + bytes > limit) {
      // One change too large for any payload: receivers resync instead.
      groups[groups.length - 1]!.o = 1;
      continue;
    }
    if (size + bytes > limit) {
      groups.push({ c: [] });
      size = header;
    }
    groups[groups.length - 1]!.c.push(entry);
    size += bytes;
  }
  return groups.map((g, i) => JSON.stringify({ w: token, t: time, i, n: groups.length, c: g.c, ...(g.o ? { o: 1 } : {}) }));
}

export class PostgresStore extends ExternalStore implements Store {
  readonly backend = "postgres";
  private readonly sql: SQL;
  /** A client of its own for LISTEN, so its onclose tells exactly when the feed dropped. */
  private readonly listenSql: SQL;
  private subscription: SQL.ListenSubscription | null = null;
  /** Parts of announcements not complete yet, by write token. */
  private readonly partial = new Map<string, { changes: Change[]; got: number; overflow: boolean }>();
  /**
   * The documents of this replica's writes in flight, by write token and
   * document version: its own announcement carries them to the watchers
   * (Change.data). Set before COMMIT, as the announcement may come first.
   */
  private readonly ownData = new Map<string, Map<string, unknown>>();
  private readonly instance = Bun.randomUUIDv7().slice(-12);
  private readonly notifyLimit: number;
  private seq = 0;
  /** True while the LISTEN connection is subscribed. */
  private feedUp = false;

  /** Opens the store: migrates the schema and subscribes to the change feed. Throws when it cannot. */
  static open(uri: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    return new PostgresStore(uri, options).openNow();
  }

  /**
   * The store at once, opening in the background: while the database is
   * unreachable (or not created yet) it tries again with exponential backoff
   * and jitter. `ready` resolves once it is open, and rejects on an error that
   * waiting cannot fix (a schema newer than this server) or when closed first.
   */
  static connect(uri: string, options: ConnectOptions = {}): { store: PostgresStore; ready: Promise<void> } {
    return new PostgresStore(uri, options).openLater(options);
  }

  protected async attach(): Promise<void> {
    await this.migrate();
    if (!this.subscription) await this.subscribe();
  }

  /** Unreachable, or refused a session (database not created yet, credentials not set up yet): an operator fixes those while it waits. */
  protected retryableAtOpen(error: unknown): boolean {
    return isConnectionError(error);
  }

  private constructor(uri: string, options: PostgresStoreOptions) {
    super("PostgreSQL");
    const url = new URL(uri);
    // Given as an option so that a PGDATABASE in the environment cannot override the URI's.
    const database = decodeURIComponent(url.pathname.slice(1)) || options.database || undefined;
    const common = { adapter: "postgres" as const, connectionTimeout: options.connectionTimeout ?? 10, ...(database ? { database } : {}) };
    this.sql = new SQL(uri, { ...common, max: options.max ?? 10 });
    this.listenSql = new SQL(uri, {
      ...common,
      max: 1,
      // A connection that only listens is idle; a server-wide idle_session_timeout must not end it.
      connection: { idle_session_timeout: 0, application_name: "svc-server feed" },
      onclose: () => this.feedLost(),
    });
    this.notifyLimit = options.notifyLimit ?? NOTIFY_LIMIT;
  }

  private async migrate(): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      const [exists] = await tx`SELECT to_regclass('schema_migrations') IS NOT NULL AS e`;
      if (!exists.e) {
        await tx`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
      }
      const [row] = await tx`SELECT coalesce(max(version), 0)::int4 AS v FROM schema_migrations`;
      const current = Number(row.v);
      if (current > MIGRATIONS.length) {
        throw new Error(`The database has schema version ${current}, newer than this server knows (${MIGRATIONS.length}); upgrade the server.`);
      }
      for (let version = current + 1; version <= MIGRATIONS.length; version++) {
        await tx.unsafe(MIGRATIONS[version - 1]!);
        await tx`INSERT INTO schema_migrations (version) VALUES (${version})`;
      }
    });
  }

  private async subscribe(): Promise<void> {
    let first = true;
    this.subscription = await this.listenSql.listen(
      CHANGES_CHANNEL,
      (payload) => this.onNotify(payload),
      () => {
        this.feedUp = true;
        if (first) first = false;
        else this.resync();
      },
    );
    this.feedUp = true;
  }

  /** The LISTEN connection closed (or a reconnect attempt failed): announcements may be lost until it is back. */
  private feedLost(): void {
    if (this.closed) return;
    this.feedUp = false;
    this.partial.clear();
    this.echoes.releaseAll();
  }

  private onNotify(payload: string): void {
    let part: NotifyPart;
    try {
      part = JSON.parse(payload) as NotifyPart;
    } catch {
      return;
    }
    if (typeof part?.w !== "string" || !Array.isArray(part.c)) return;
    let entry = this.partial.get(part.w);
    if (!entry) this.partial.set(part.w, (entry = { changes: [], got: 0, overflow: false }));
    const own = this.ownData.get(part.w);
    for (const [collection, id, version] of part.c) {
      const data = version === 0 ? undefined : own?.get(versionKey(collection, id, version));
      entry.changes.push({ collection, id, version, op: version === 0 ? "delete" : "put", ...(data !== undefined ? { data } : {}) });
    }
    entry.overflow ||= part.o === 1;
    if (++entry.got < part.n) return;
    this.partial.delete(part.w);
    if (entry.changes.length > 0) this.watchers.emit(entry.changes, typeof part.t === "number" ? part.t : undefined);
    if (entry.overflow) this.resync();
    this.echoes.arrived(part.w);
  }

  /** Tells every watcher that it may have missed changes. */
  private resync(): void {
    if (!this.closed) this.watchers.resync();
  }

  /** Runs `fn`, again after a short pause when the connection it used had gone away. */
  private async retrying<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      this.assertOpen();
      try {
        return await fn();
      } catch (error) {
        if (!isConnectionError(error) || this.closed) throw error;
        if (attempt >= ATTEMPTS) throw this.unavailable(error);
        await Bun.sleep(50 * 4 ** (attempt - 1));
      }
    }
  }

  private toDoc<T>(collection: string, row: DocRow): Doc<T> {
    return {
      collection,
      id: row.id,
      version: Number(row.version),
      data: JSON.parse(row.data) as T,
      updatedAt: new Date(row.updated_at).toISOString(),
    };
  }

  async get<T>(collection: string, id: string): Promise<Doc<T> | null> {
    const rows = await this.retrying(
      () => this.sql<DocRow[]>`SELECT id, version, data::text AS data, updated_at FROM docs WHERE collection = ${collection} AND id = ${id}`,
    );
    return rows.length > 0 ? this.toDoc<T>(collection, rows[0]!) : null;
  }

  async getMany<T>(collection: string, ids: readonly string[]): Promise<Map<string, Doc<T>>> {
    const found = new Map<string, Doc<T>>();
    for (let i = 0; i < ids.length; i += GET_MANY_CHUNK) {
      const chunk = ids.slice(i, i + GET_MANY_CHUNK);
      const rows = await this.retrying(
        () =>
          this.sql<DocRow[]>`SELECT id, version, data::text AS data, updated_at FROM docs
            WHERE collection = ${collection} AND id = ANY(${chunk}::text[])`,
      );
      for (const row of rows) found.set(row.id, this.toDoc<T>(collection, row));
    }
    return found;
  }

  async list<T>(collection: string, options: ListOptions = {}): Promise<Doc<T>[]> {
    const sql = this.sql;
    const rows = await this.retrying(() => {
      const prefix = options.prefix !== undefined ? sql`AND id >= ${options.prefix} AND id < ${prefixEnd(options.prefix)}` : sql``;
      const after = options.after !== undefined ? sql`AND id > ${options.after}` : sql``;
      const limit = options.limit !== undefined ? sql`LIMIT ${options.limit}` : sql``;
      return sql<DocRow[]>`SELECT id, version, data::text AS data, updated_at FROM docs
        WHERE collection = ${collection} ${prefix} ${after} ORDER BY id ${limit}`;
    });
    return rows.map((row) => this.toDoc<T>(collection, row));
  }

  async count(collection: string): Promise<number> {
    const [row] = await this.retrying(() => this.sql`SELECT count(*)::int8 AS n FROM docs WHERE collection = ${collection}`);
    return Number(row.n);
  }

  async write(ops: WriteOp[], audit: AuditEntry[] = []): Promise<Doc[]> {
    this.assertOpen();
    if (ops.length === 0 && audit.length === 0) return [];
    const token = `${this.instance}:${++this.seq}`;
    const now = new Date();
    const updatedAt = now.toISOString();
    let written: Doc[] = [];
    let changes: Change[] = [];
    // Registered before COMMIT: the announcement may overtake the COMMIT's answer.
    const echo = this.echoes.expect(token);
    try {
      for (let attempt = 1; ; attempt++) {
        /** This transaction's id once its body ran: from then on COMMIT may have been sent. */
        let xid = null as string | null;
        try {
          await this.sql.begin(async (tx) => {
            const result = await this.applyInTransaction(tx, ops, audit, token, now, updatedAt);
            written = result.written;
            changes = result.changes;
            xid = result.xid;
          });
          break;
        } catch (error) {
          if (!isConnectionError(error) || this.closed) throw error;
          if (xid !== null) {
            const outcome = await this.commitOutcome(xid);
            if (outcome === "committed") break;
            if (outcome === "unknown") throw this.commitUnknown(error);
          }
          // Not committed (COMMIT never sent, or the transaction aborted): nothing was applied, so running it again is safe.
          if (attempt >= ATTEMPTS) throw this.unavailable(error);
          await Bun.sleep(50 * 4 ** (attempt - 1));
        }
      }
    } catch (error) {
      echo.cancel();
      this.ownData.delete(token);
      throw error;
    }
    try {
      if (changes.length === 0 || !this.feedUp) {
        // Nothing announced, or the feed is down (its reconnect will tell watchers to resync).
        echo.cancel();
        return written;
      }
      if (!(await echo.wait)) this.resync();
      return written;
    } finally {
      // Heard by now, or never here: an announcement arriving later carries no data, and readers read.
      this.ownData.delete(token);
    }
  }

  /**
   * What became of a transaction whose COMMIT got no answer, asked on a fresh
   * connection. A session ended mid-commit finishes or aborts its transaction
   * before it exits, so "in progress" only needs a moment.
   */
  private async commitOutcome(xid: string): Promise<"committed" | "aborted" | "unknown"> {
    for (let attempt = 1; attempt <= 5; attempt++) {
      try {
        const [row] = await this.retrying(() => this.sql<{ s: string | null }[]>`SELECT pg_xact_status(${xid}::xid8) AS s`);
        if (row!.s === "committed") return "committed";
        if (row!.s === "aborted") return "aborted";
        if (row!.s !== "in progress") return "unknown";
      } catch {
        return "unknown";
      }
      await Bun.sleep(20 * attempt);
    }
    return "unknown";
  }

  /**
   * The write's statements: the locks, the versions, then one statement that
   * deletes, puts, logs the audit entries, announces and takes the
   * transaction id (its data-modifying parts always run; an empty one does
   * nothing). Few round trips, so documents stay locked briefly: writers of
   * one document queue on its lock, one transaction after another.
   */
  private async applyInTransaction(
    tx: SQL,
    ops: WriteOp[],
    audit: AuditEntry[],
    token: string,
    now: Date,
    updatedAt: string,
  ): Promise<{ written: Doc[]; changes: Change[]; xid: string }> {
    const written: Doc[] = [];
    const changes: Change[] = [];
    const deletes: { collection: string; id: string }[] = [];
    const puts: { collection: string; id: string; version: number; data: unknown }[] = [];
    if (ops.length > 0) {
      const keys = [...new Set(ops.map((op) => keyOf(op.collection, op.id)))];
      // Sorted, so two batches over the same documents cannot deadlock.
      const locks = [...new Set(keys.map((k) => lockKey(k)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (locks.length > MAX_DOCUMENT_LOCKS) {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${BATCH_LOCK})`);
      } else {
        // The batch lock shared first (an uncorrelated condition, run once before any row), then each document's in order.
        await tx`SELECT pg_advisory_xact_lock(k) FROM unnest(${locks.map(String)}::text[]::int8[]) WITH ORDINALITY AS l(k, n)
          WHERE (SELECT pg_advisory_xact_lock_shared(${BATCH_KEY[0]}::int4, ${BATCH_KEY[1]}::int4)::text) IS NOT NULL ORDER BY n`;
      }
      const collections = ops.map((op) => op.collection);
      const ids = ops.map((op) => op.id);
      const rows = await tx<{ collection: string; id: string; version: string }[]>`
        SELECT d.collection, d.id, d.version FROM docs d
        JOIN (SELECT DISTINCT c, i FROM unnest(${collections}::text[], ${ids}::text[]) AS k(c, i)) k
          ON d.collection = k.c AND d.id = k.i`;
      const current = new Map<string, number | null>(rows.map((r) => [keyOf(r.collection, r.id), Number(r.version)]));
      /** The final state of every touched document: data to put, or null to delete. */
      const final = new Map<string, { collection: string; id: string; version: number; data: unknown } | null>();
      for (const op of ops) {
        const key = keyOf(op.collection, op.id);
        const version = current.get(key) ?? null;
        checkGuard(op, version);
        if (op.op === "put") {
          const next = (version ?? 0) + 1;
          current.set(key, next);
          final.set(key, { collection: op.collection, id: op.id, version: next, data: op.data });
          written.push({ collection: op.collection, id: op.id, version: next, data: op.data, updatedAt });
          changes.push({ collection: op.collection, id: op.id, version: next, op: "put" });
        } else if (version !== null) {
          current.set(key, null);
          final.set(key, null);
          changes.push({ collection: op.collection, id: op.id, version: 0, op: "delete" });
        }
      }
      for (const [key, state] of final) {
        if (state) puts.push(state);
        else {
          const at = key.indexOf("\u0000");
          deletes.push({ collection: key.slice(0, at), id: key.slice(at + 1) });
        }
      }
    }
    const texts = puts.map((p) => {
      const text = JSON.stringify(p.data);
      if (text === undefined) throw new TypeError(`${p.collection}/${p.id}: the document is not JSON`);
      return text;
    });
    // Delivered on COMMIT only, in order, and dropped on ROLLBACK.
    const parts = changes.length > 0 ? notifyParts(token, changes, this.notifyLimit) : [];
    // A retried transaction (the first one aborted) replaces what the first planned.
    this.ownData.set(token, new Map(written.map((doc) => [versionKey(doc.collection, doc.id, doc.version), doc.data])));
    const [row] = await tx<{ x: string }[]>`
      WITH removed AS (
        DELETE FROM docs d USING unnest(${deletes.map((d) => d.collection)}::text[], ${deletes.map((d) => d.id)}::text[]) AS k(c, i)
        WHERE d.collection = k.c AND d.id = k.i
      ), stored AS (
        INSERT INTO docs (collection, id, version, data, updated_at)
        SELECT c, i, v, d::json, ${now}::timestamptz
        FROM unnest(${puts.map((p) => p.collection)}::text[], ${puts.map((p) => p.id)}::text[],
                    ${puts.map((p) => String(p.version))}::text[]::int8[], ${texts}::text[]) AS k(c, i, v, d)
        ON CONFLICT (collection, id) DO UPDATE
          SET version = EXCLUDED.version, data = EXCLUDED.data, updated_at = EXCLUDED.updated_at
      ), logged AS (
        INSERT INTO audit (id, time, actor, action, entry)
        SELECT i, t, a, x, e::json
        FROM unnest(${audit.map((e) => e.id)}::text[], ${audit.map((e) => e.time)}::text[], ${audit.map((e) => e.actor)}::text[],
                    ${audit.map((e) => e.action)}::text[], ${audit.map((e) => JSON.stringify(e))}::text[]) AS k(i, t, a, x, e)
      )
      SELECT pg_current_xact_id()::text AS x,
        (SELECT count(*) FROM (SELECT pg_notify(${CHANGES_CHANNEL}, p) FROM unnest(${parts}::text[]) WITH ORDINALITY AS n(p, o) ORDER BY o) s) AS n`;
    return { written, changes, xid: row!.x };
  }

  async queryAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const sql = this.sql;
    const rows = await this.retrying(() => {
      const where = [
        query.from !== undefined ? sql`AND time >= ${query.from}` : sql``,
        query.to !== undefined ? sql`AND time < ${query.to}` : sql``,
        query.actor !== undefined ? sql`AND actor = ${query.actor}` : sql``,
        query.action !== undefined ? sql`AND action = ${query.action}` : sql``,
        query.before !== undefined ? sql`AND id < ${query.before}` : sql``,
      ];
      return sql<{ entry: string }[]>`SELECT entry::text AS entry FROM audit WHERE true
        ${where[0]} ${where[1]} ${where[2]} ${where[3]} ${where[4]}
        ORDER BY id DESC LIMIT ${query.limit}`;
    });
    return rows.map((row) => JSON.parse(row.entry) as AuditEntry);
  }

  async pruneAudit(before: string): Promise<number> {
    const result = await this.retrying(() => this.sql`DELETE FROM audit WHERE time < ${before}`);
    return result.count;
  }

  async collections(): Promise<string[]> {
    const rows = await this.retrying(() => this.sql<{ collection: string }[]>`SELECT DISTINCT collection FROM docs ORDER BY collection`);
    return rows.map((row) => row.collection);
  }

  /** Not retried: a COMMIT whose answer was lost would make the retry fail as a conflict. */
  async restore(docs: Doc[], audit: AuditEntry[]): Promise<void> {
    this.assertOpen();
    try {
      await this.sql.begin(async (tx) => {
        if (docs.length > 0) {
          await tx`INSERT INTO docs (collection, id, version, data, updated_at)
            SELECT c, i, v, d::json, u::timestamptz
            FROM unnest(${docs.map((d) => d.collection)}::text[], ${docs.map((d) => d.id)}::text[],
                        ${docs.map((d) => String(d.version))}::text[]::int8[], ${docs.map((d) => JSON.stringify(d.data))}::text[],
                        ${docs.map((d) => d.updatedAt)}::text[]) AS k(c, i, v, d, u)`;
        }
        if (audit.length > 0) {
          await tx`INSERT INTO audit (id, time, actor, action, entry)
            SELECT i, t, a, x, e::json
            FROM unnest(${audit.map((e) => e.id)}::text[], ${audit.map((e) => e.time)}::text[], ${audit.map((e) => e.actor)}::text[],
                        ${audit.map((e) => e.action)}::text[], ${audit.map((e) => JSON.stringify(e))}::text[]) AS k(i, t, a, x, e)`;
        }
      });
    } catch (error) {
      if ((error as { errno?: string }).errno === "23505") {
        throw new ConflictError(`The target already holds a record being restored: ${(error as Error).message}`, "restore_conflict");
      }
      throw isConnectionError(error) ? this.unavailable(error) : error;
    }
  }

  /**
   * A NOTIFY of no changes in a transaction of its own, and the wait for it:
   * PostgreSQL delivers the notifications of different transactions in the
   * order they committed, so when this one arrives, every write committed
   * before it has been announced to this replica's watchers.
   */
  async sync(): Promise<void> {
    this.assertOpen();
    if (!this.feedUp) {
      // Announcements are lost until the feed is back: only reading again is sure.
      this.resync();
      return;
    }
    const token = `${this.instance}:${++this.seq}`;
    const echo = this.echoes.expect(token);
    try {
      const [marker] = notifyParts(token, [], this.notifyLimit);
      await this.retrying(() => this.sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${marker!})`);
    } catch (error) {
      echo.cancel();
      throw error;
    }
    if (!(await echo.wait)) this.resync();
  }

  /**
   * One transaction, not retried, bounded by PING_DEADLINE_MS on the server
   * (statement_timeout) and here (a pool whose connections all wait on a
   * stalled write has none to lend): it takes the lock every write takes on
   * docs and audit, so a table lock that stalls writes fails it, and gets a
   * transaction id, as a write does before it commits.
   */
  async ping(): Promise<void> {
    this.assertOpen();
    const stalled = `a write could not take its locks within ${PING_DEADLINE_MS} ms`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), PING_DEADLINE_MS)));
    const probe = this.sql.begin(async (tx) => {
      await tx.unsafe(`SET LOCAL statement_timeout = ${PING_DEADLINE_MS}`);
      await tx`LOCK TABLE docs, audit IN ROW EXCLUSIVE MODE`;
      await tx`SELECT pg_current_xact_id()`;
    });
    probe.catch(() => {}); // a failure after the deadline was answered already
    try {
      if ((await Promise.race([probe, deadline])) === "late") throw this.stalled(stalled);
    } catch (error) {
      // 57014: statement_timeout ended the wait for the lock.
      if ((error as { errno?: string }).errno === "57014") throw this.stalled(stalled);
      throw isConnectionError(error) ? this.unavailable(error) : error;
    } finally {
      clearTimeout(timer);
    }
  }

  protected async release(): Promise<void> {
    this.partial.clear();
    await this.subscription?.unlisten().catch(() => {});
    await Promise.allSettled([this.listenSql.close({ timeout: 0 }), this.sql.close({ timeout: 5 })]);
  }
}
