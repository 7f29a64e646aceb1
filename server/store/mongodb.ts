/**
 * External Store adapter for MongoDB and compatible servers (Amazon
 * DocumentDB, FerretDB) through the official `mongodb` driver. Any number of
 * server replicas share one database:
 * - documents are records of `docs`: collection, id, version, data (the
 *   exact JSON text, so documents round-trip like the embedded store: key
 *   order, "\u0000" keys and lone surrogates included, none of which BSON
 *   keeps) and updatedAt (a BSON date). `_id` is the JSON text of
 *   [collection, id]: unique, and free of the NUL a "<collection>\0<id>" key
 *   would hold (FerretDB keeps strings in PostgreSQL, which refuses NUL).
 *   `list` sorts by (collection, id) through its own index.
 * - a write is one multi-document transaction (session.withTransaction,
 *   snapshot read concern, majority write concern): it reads the current
 *   versions, checks every guard with the embedded store's checkGuard and
 *   applies the batch. Every guarded op writes the document it guards, so
 *   two writers racing on it meet a write conflict and the driver retries
 *   the loser, which then sees the winner's version: compare-and-swap holds
 *   across replicas, "absent" guards included. Transactions need a replica
 *   set (a single-member one will do) or a sharded cluster; a standalone
 *   server is refused at open with a message saying so.
 * - the change feed is a log: each write inserts one record into `changes`
 *   in its own transaction ({_id: write token, c: [[collection, id,
 *   version (0 = delete)], ...]}), so only a commit is announced, a write's
 *   changes arrive together, `restore` (which logs nothing) stays silent,
 *   and a replica recognises its own write. Replicas follow the log by a
 *   change stream on inserts into `changes` where the server offers change
 *   streams; the driver resumes a dropped stream by its resume token, and a
 *   stream that cannot be resumed is reopened from now and the watchers
 *   resync. Where there are no change streams (FerretDB, DocumentDB with
 *   change streams not enabled) each write also takes the next number of a
 *   counter in `meta` (which serialises writes cluster-wide: concurrent
 *   writers conflict and are retried) and replicas poll `changes` by that
 *   number every POLL_MS, which finds a gap, and resyncs, when records
 *   expired (after CHANGES_TTL_SECONDS) before it read them. Every replica's
 *   watchers hear every committed write, their own included, once. A write
 *   resolves after its own record reached this replica's watchers (or after
 *   ECHO_TIMEOUT_MS; the watchers are then told to resync).
 * - an unreachable database is an outage, not a crash: operations then throw
 *   StorageUnavailableError (503 + Retry-After at the edge); `connect`
 *   returns a store that keeps trying to open in the background. The driver
 *   retries a read or write once after a network error, and a transaction on
 *   transient errors for up to 120 s; a commit whose outcome it could not
 *   learn is reported as unknown, never as success.
 */
import {
  type AnyBulkWriteOperation,
  type ChangeStream,
  type ChangeStreamInsertDocument,
  type ClientSession,
  type Collection,
  type Db,
  type Filter,
  MongoClient,
  MongoError,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
  type TransactionOptions,
} from "mongodb";
import { ConflictError } from "../errors.ts";
import { type ConnectOptions, ExternalStore, openInBackground } from "./external.ts";
import { checkGuard } from "./sqlite.ts";
import type { AuditEntry, AuditQuery, Change, Doc, ListOptions, Store, WriteOp } from "./store.ts";

/** The schema this server knows: indexes and records as created by `migrate`. A newer one is refused. */
const SCHEMA_VERSION = 1;
/** How often replicas without change streams look for new records in `changes`. */
const POLL_MS = 250;
/** How long `changes` records are kept (a TTL index removes them after): long enough for any replica to read them. */
const CHANGES_TTL_SECONDS = 3600;
/** The most `changes` records one poll reads. */
const POLL_BATCH = 1000;
/** Ids per query of getMany. */
const GET_MANY_CHUNK = 1000;

/** Server error codes of a server that went away, is stepping down or shutting down (the operation did not run, or its outcome is unknown). */
const CONNECTION_CODES = new Set([6, 7, 89, 91, 189, 9001, 10107, 11600, 11602, 13435, 13436]);
/** Socket and name-resolution failures outside the driver's own error classes (a mongodb+srv:// name's SRV lookup). */
const NETWORK_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ESERVFAIL"]);
/** AuthenticationFailed: the user may not be set up yet, which an operator fixes while the server waits. */
const AUTHENTICATION_FAILED = 18;
/** IllegalOperation ("Transaction numbers are only allowed on a replica set member or mongos"), CommandNotSupported, OperationNotSupportedInTransaction. */
const NO_TRANSACTION_CODES = new Set([20, 115, 263]);
/** DuplicateKey. */
const DUPLICATE_KEY = 11000;

const TRANSACTION: TransactionOptions = {
  readConcern: { level: "snapshot" },
  writeConcern: { w: "majority", journal: true },
  readPreference: "primary",
};

interface DocRecord {
  _id: string;
  collection: string;
  id: string;
  version: number;
  /** The document's JSON text. */
  data: string;
  updatedAt: Date;
}

interface AuditRecord {
  _id: string;
  time: string;
  actor: string;
  action: string;
  /** The entry's JSON text. */
  entry: string;
}

/** One write's announcement: its changes as [collection, id, version (0 = delete)]. */
export interface ChangeRecord {
  _id: string;
  c: [string, string, number][];
  at: Date;
  /** The write's number in the cluster-wide sequence, when replicas poll. */
  seq?: number;
}

interface MetaRecord {
  _id: string;
  version?: number;
  n?: number;
}

export type FeedMode = "stream" | "poll";

export interface MongoStoreOptions {
  /** The database to use when the URI names none (database.database). */
  database?: string;
  /** Seconds to wait for a server to answer before an operation fails as unavailable. */
  connectionTimeout?: number;
  /** "auto" (default) follows the feed by change stream where the server offers one, else by polling; "poll" always polls. */
  changeFeed?: "auto" | "poll";
}

export interface MongoConnectOptions extends MongoStoreOptions, ConnectOptions {}

/** The `_id` of a document: the JSON text of [collection, id]. */
export function docKey(collection: string, id: string): string {
  return JSON.stringify([collection, id]);
}

/**
 * The database a MongoDB URI names in its path, or "" when it names none.
 * Parsed by hand: a seed list (a:27017,b:27017) is not a WHATWG URL.
 */
export function uriDatabase(uri: string): string {
  const rest = uri.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").split("?")[0]!;
  const hosts = rest.slice(rest.lastIndexOf("@") + 1);
  const slash = hosts.indexOf("/");
  return slash < 0 ? "" : decodeURIComponent(hosts.slice(slash + 1));
}

/** The filter, sort and limit of `list`; a limit of 0 is null (MongoDB reads 0 as "no limit"). */
export function listQuery(collection: string, options: ListOptions): { filter: Filter<DocRecord>; limit: number } | null {
  if (options.limit !== undefined && options.limit <= 0) return null;
  const range: { $gte?: string; $lt?: string; $gt?: string } = {};
  if (options.prefix !== undefined) {
    range.$gte = options.prefix;
    range.$lt = options.prefix + "\u{10FFFF}";
  }
  if (options.after !== undefined) range.$gt = options.after;
  const filter: Filter<DocRecord> = Object.keys(range).length > 0 ? { collection, id: range } : { collection };
  return { filter, limit: options.limit ?? 0 };
}

/** The filter of `queryAudit` (entries come newest first, by id). */
export function auditFilter(query: AuditQuery): Filter<AuditRecord> {
  const filter: Filter<AuditRecord> = {};
  const time: { $gte?: string; $lt?: string } = {};
  if (query.from !== undefined) time.$gte = query.from;
  if (query.to !== undefined) time.$lt = query.to;
  if (Object.keys(time).length > 0) filter.time = time;
  if (query.actor !== undefined) filter.actor = query.actor;
  if (query.action !== undefined) filter.action = query.action;
  if (query.before !== undefined) filter._id = { $lt: query.before };
  return filter;
}

/** The changes a `changes` record announces; a malformed record announces nothing (null). */
export function changesOf(record: Partial<ChangeRecord> | null | undefined): Change[] | null {
  if (!record || typeof record._id !== "string" || !Array.isArray(record.c)) return null;
  const changes: Change[] = [];
  for (const entry of record.c) {
    if (!Array.isArray(entry) || entry.length !== 3) return null;
    const [collection, id, version] = entry;
    if (typeof collection !== "string" || typeof id !== "string" || typeof version !== "number") return null;
    changes.push({ collection, id, version, op: version === 0 ? "delete" : "put" });
  }
  return changes;
}

/**
 * What one poll read: the records to deliver in order, the new high-water
 * mark, and whether records were missed (a number was skipped: expired
 * before this replica read it).
 */
export function pollStep(last: number, records: Pick<ChangeRecord, "seq">[]): { last: number; gap: boolean } {
  let gap = false;
  let mark = last;
  for (const record of records) {
    const seq = record.seq ?? 0;
    if (seq <= mark) continue;
    if (seq !== mark + 1) gap = true;
    mark = seq;
  }
  return { last: mark, gap };
}

/** True for a failure of the connection or of the server's availability (not of the operation itself). */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true;
  if (error instanceof MongoServerError) return CONNECTION_CODES.has(Number(error.code));
  return error instanceof Error && NETWORK_CODES.has(String((error as { code?: unknown }).code));
}

/** True when the server refused to run a transaction at all (a standalone server, a server without transactions). */
export function isNoTransactions(error: unknown): error is MongoServerError {
  if (!(error instanceof MongoServerError) || isConnectionError(error)) return false;
  return NO_TRANSACTION_CODES.has(Number(error.code)) || /transaction|replica set|mongos/i.test(error.message);
}

function toRecord(doc: Doc): DocRecord {
  const data = JSON.stringify(doc.data);
  if (data === undefined) throw new TypeError(`${doc.collection}/${doc.id}: the document is not JSON`);
  return { _id: docKey(doc.collection, doc.id), collection: doc.collection, id: doc.id, version: doc.version, data, updatedAt: new Date(doc.updatedAt) };
}

function auditRecord(entry: AuditEntry): AuditRecord {
  return { _id: entry.id, time: entry.time, actor: entry.actor, action: entry.action, entry: JSON.stringify(entry) };
}

function toDoc<T>(record: DocRecord): Doc<T> {
  return {
    collection: record.collection,
    id: record.id,
    version: Number(record.version),
    data: JSON.parse(record.data) as T,
    updatedAt: new Date(record.updatedAt).toISOString(),
  };
}

export class MongoStore extends ExternalStore implements Store {
  readonly backend = "mongodb";
  private readonly client: MongoClient;
  private readonly db: Db;
  private readonly docs: Collection<DocRecord>;
  private readonly audit: Collection<AuditRecord>;
  private readonly changes: Collection<ChangeRecord>;
  private readonly meta: Collection<MetaRecord>;
  private readonly wantFeed: "auto" | "poll";
  /** How this replica follows the feed, decided at open by what the server offers; kept when the feed is reopened. */
  private mode: FeedMode | null = null;
  private stream: ChangeStream<ChangeRecord, ChangeStreamInsertDocument<ChangeRecord>> | null = null;
  /** Polling: the sequence number of the last record delivered. */
  private lastSeq = 0;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private polling: Promise<void> | null = null;
  private pollAgain = false;
  /** True while the feed is followed without a known gap. */
  private feedUp = false;

  /** Opens the store: checks the server, creates indexes and follows the change feed. Throws when it cannot. */
  static open(uri: string, options: MongoStoreOptions = {}): Promise<MongoStore> {
    return new MongoStore(uri, options).openNow();
  }

  /**
   * The store at once, opening in the background: while the database is
   * unreachable it tries again with exponential backoff and jitter. `ready`
   * resolves once it is open, and rejects on an error that waiting cannot fix
   * (a standalone server, a schema newer than this server) or when closed first.
   */
  static connect(uri: string, options: MongoConnectOptions = {}): { store: MongoStore; ready: Promise<void> } {
    return new MongoStore(uri, options).openLater(options);
  }

  protected retryableAtOpen(error: unknown): boolean {
    return isConnectionError(error) || (error instanceof MongoServerError && error.code === AUTHENTICATION_FAILED);
  }

  private constructor(uri: string, options: MongoStoreOptions) {
    super("MongoDB");
    const timeoutMs = (options.connectionTimeout ?? 10) * 1000;
    // The driver lets options override the URI's; a timeout the operator wrote in the URI wins here.
    const inUri = (name: string) => new RegExp(`[?&]${name}=`, "i").test(uri);
    this.client = new MongoClient(uri, {
      appName: "svc-server",
      ...(inUri("serverSelectionTimeoutMS") ? {} : { serverSelectionTimeoutMS: timeoutMs }),
      ...(inUri("connectTimeoutMS") ? {} : { connectTimeoutMS: timeoutMs }),
    });
    const name = uriDatabase(uri) || options.database || "svc";
    this.db = this.client.db(name);
    this.docs = this.db.collection<DocRecord>("docs");
    this.audit = this.db.collection<AuditRecord>("audit");
    this.changes = this.db.collection<ChangeRecord>("changes");
    this.meta = this.db.collection<MetaRecord>("meta");
    this.wantFeed = options.changeFeed ?? "auto";
  }

  /** How this replica follows the change feed (null until open). */
  get feedMode(): FeedMode | null {
    return this.mode;
  }

  protected async attach(): Promise<void> {
    // Explicitly: a failed implicit connect (by a first operation) closes the client for good, a failed connect() does not.
    await this.client.connect();
    await this.migrate();
    if (this.mode === null) await this.follow();
  }

  /**
   * Creates the indexes (idempotent, and creating them creates the
   * collections, which older servers cannot do inside a transaction), then
   * checks and records the schema version in a transaction: which is also
   * the proof that the server runs transactions at all.
   */
  private async migrate(): Promise<void> {
    await this.docs.createIndex({ collection: 1, id: 1 }, { name: "collection_id", unique: true });
    await this.audit.createIndex({ time: 1 }, { name: "time" });
    await this.changes.createIndex({ seq: 1 }, { name: "seq" });
    await this.changes.createIndex({ at: 1 }, { name: "at_ttl", expireAfterSeconds: CHANGES_TTL_SECONDS });
    try {
      await this.transaction(async (session) => {
        const schema = await this.meta.findOne({ _id: "schema" }, { session });
        const current = schema?.version ?? 0;
        if (current > SCHEMA_VERSION) {
          throw new Error(
            `The database has schema version ${current}, newer than this server knows (${SCHEMA_VERSION}); upgrade the server.`,
          );
        }
        if (current < SCHEMA_VERSION) {
          await this.meta.updateOne({ _id: "schema" }, { $set: { version: SCHEMA_VERSION } }, { session, upsert: true });
        }
      });
    } catch (error) {
      if (isNoTransactions(error)) {
        throw new Error(
          `The MongoDB server refused a multi-document transaction (${error.message}). svc needs transactions: ` +
            "run MongoDB as a replica set (a single-member one will do) or a sharded cluster, not a standalone server.",
          { cause: error },
        );
      }
      throw error;
    }
  }

  private transaction<T>(fn: (session: ClientSession) => Promise<T>): Promise<T> {
    return this.client.withSession((session) => session.withTransaction(() => fn(session), TRANSACTION));
  }

  /**
   * Starts following the feed: by change stream where the server offers one,
   * else by polling. Every replica of a deployment decides alike (the server
   * decides), which matters: only polling replicas number their writes.
   */
  private async follow(): Promise<void> {
    if (this.wantFeed === "auto") {
      try {
        await this.openStream();
        return;
      } catch (error) {
        if (isConnectionError(error) || !(error instanceof MongoServerError)) throw error;
        // No change streams here (FerretDB, DocumentDB without them enabled): poll instead.
      }
    }
    const counter = await this.meta.findOne({ _id: "seq" });
    this.lastSeq = counter?.n ?? 0;
    this.mode = "poll";
    this.feedUp = true;
    this.schedulePoll();
  }

  private async openStream(): Promise<void> {
    const stream = this.changes.watch<ChangeRecord, ChangeStreamInsertDocument<ChangeRecord>>([{ $match: { operationType: "insert" } }]);
    let first;
    try {
      // Sends the aggregate, so the stream starts here: every later commit is in it.
      first = await stream.tryNext();
    } catch (error) {
      await stream.close().catch(() => {});
      throw error;
    }
    this.stream = stream;
    this.mode = "stream";
    this.feedUp = true;
    if (first) this.deliver(first.fullDocument);
    void this.consume(stream);
  }

  /** Reads the change stream until it fails for good, then reopens it and tells watchers to resync. */
  private async consume(stream: ChangeStream<ChangeRecord, ChangeStreamInsertDocument<ChangeRecord>>): Promise<void> {
    try {
      for (;;) {
        const event = await stream.next();
        this.deliver(event.fullDocument);
      }
    } catch (error) {
      if (this.closed) return;
      console.error("svc store: the MongoDB change stream failed; reopening it", (error as Error).message);
    }
    this.feedLost();
    await stream.close().catch(() => {});
    if (this.stream === stream) this.stream = null;
    try {
      await openInBackground({
        name: "MongoDB change feed",
        start: () => this.openStream(),
        closed: () => this.closed,
        retryable: () => true,
        failed: (error, delayMs) => console.error(`svc store: cannot reopen the MongoDB change stream (${error.message}); retrying in ${delayMs} ms`),
      });
    } catch {
      return; // closed meanwhile
    }
    this.watchers.resync();
  }

  private feedLost(): void {
    this.feedUp = false;
    this.echoes.releaseAll();
  }

  private deliver(record: ChangeRecord | undefined): void {
    const changes = changesOf(record);
    if (changes === null) return;
    if (changes.length > 0) this.watchers.emit(changes, record!.at instanceof Date ? record!.at.getTime() : undefined);
    this.echoes.arrived(record!._id);
  }

  private schedulePoll(): void {
    if (this.closed || this.pollTimer) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = null;
      void this.poll();
    }, POLL_MS);
  }

  /** Reads what was logged since the last poll (one poll at a time; a request meanwhile runs another right after). */
  private poll(): Promise<void> {
    if (this.polling) {
      this.pollAgain = true;
      return this.polling;
    }
    this.polling = (async () => {
      do {
        this.pollAgain = false;
        await this.pollOnce();
      } while (this.pollAgain && !this.closed);
    })().finally(() => {
      this.polling = null;
      this.schedulePoll();
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    for (;;) {
      let records: ChangeRecord[];
      try {
        records = await this.changes.find({ seq: { $gt: this.lastSeq } }).sort({ seq: 1 }).limit(POLL_BATCH).toArray();
      } catch (error) {
        if (this.closed) return;
        // Nothing is lost while the database is away: the next poll continues from the same number.
        if (this.feedUp) console.error("svc store: polling MongoDB for changes failed", (error as Error).message);
        this.feedLost();
        return;
      }
      this.feedUp = true;
      const step = pollStep(this.lastSeq, records);
      for (const record of records) this.deliver(record);
      this.lastSeq = step.last;
      if (step.gap) this.watchers.resync();
      if (records.length < POLL_BATCH) return;
    }
  }

  /** Runs one operation (the driver already retried it once where that is safe), turning an outage into StorageUnavailableError. */
  private async run<T>(fn: () => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await fn();
    } catch (error) {
      throw isConnectionError(error) ? this.unavailable(error) : error;
    }
  }

  async get<T>(collection: string, id: string): Promise<Doc<T> | null> {
    const record = await this.run(() => this.docs.findOne({ _id: docKey(collection, id) }));
    return record ? toDoc<T>(record) : null;
  }

  async getMany<T>(collection: string, ids: readonly string[]): Promise<Map<string, Doc<T>>> {
    const found = new Map<string, Doc<T>>();
    for (let i = 0; i < ids.length; i += GET_MANY_CHUNK) {
      const keys = ids.slice(i, i + GET_MANY_CHUNK).map((id) => docKey(collection, id));
      const records = await this.run(() => this.docs.find({ _id: { $in: keys } }).toArray());
      for (const record of records) {
        const doc = toDoc<T>(record);
        found.set(doc.id, doc);
      }
    }
    return found;
  }

  async list<T>(collection: string, options: ListOptions = {}): Promise<Doc<T>[]> {
    const query = listQuery(collection, options);
    if (!query) return [];
    const records = await this.run(() => this.docs.find(query.filter).sort({ collection: 1, id: 1 }).limit(query.limit).toArray());
    return records.map((record) => toDoc<T>(record));
  }

  async count(collection: string): Promise<number> {
    return this.run(() => this.docs.countDocuments({ collection }));
  }

  async write(ops: WriteOp[], audit: AuditEntry[] = []): Promise<Doc[]> {
    this.assertOpen();
    if (ops.length === 0 && audit.length === 0) return [];
    const token = Bun.randomUUIDv7();
    const updatedAt = new Date();
    let written: Doc[] = [];
    let changes: Change[] = [];
    // Registered before the commit: the announcement may overtake the commit's answer.
    const echo = this.echoes.expect(token);
    try {
      await this.transaction(async (session) => {
        // The callback may run again after a transient error: start from nothing each time.
        const result = await this.applyInTransaction(session, ops, audit, token, updatedAt);
        written = result.written;
        changes = result.changes;
      });
    } catch (error) {
      echo.cancel();
      // Before the outage check: a commit whose answer was lost is often a network error too.
      if (error instanceof MongoError && error.hasErrorLabel("UnknownTransactionCommitResult")) {
        throw this.commitUnknown(error);
      }
      throw isConnectionError(error) ? this.unavailable(error) : error;
    }
    if (changes.length === 0 || !this.feedUp) {
      // Nothing announced, or the feed is down (its return tells watchers to resync).
      echo.cancel();
      return written;
    }
    if (this.mode === "poll") void this.poll();
    if (!(await echo.wait)) this.watchers.resync();
    return written;
  }

  private async applyInTransaction(
    session: ClientSession,
    ops: WriteOp[],
    audit: AuditEntry[],
    token: string,
    updatedAt: Date,
  ): Promise<{ written: Doc[]; changes: Change[] }> {
    const written: Doc[] = [];
    const changes: Change[] = [];
    if (ops.length > 0) {
      const keys = [...new Set(ops.map((op) => docKey(op.collection, op.id)))];
      const found = await this.docs.find({ _id: { $in: keys } }, { session, projection: { version: 1 } }).toArray();
      const current = new Map<string, number | null>(found.map((r) => [r._id, Number(r.version)]));
      /** The final state of every touched document: the record to put, or null to delete. */
      const final = new Map<string, DocRecord | null>();
      const iso = updatedAt.toISOString();
      for (const op of ops) {
        const key = docKey(op.collection, op.id);
        const version = current.get(key) ?? null;
        checkGuard(op, version);
        if (op.op === "put") {
          const next = (version ?? 0) + 1;
          current.set(key, next);
          final.set(key, toRecord({ collection: op.collection, id: op.id, version: next, data: op.data, updatedAt: iso }));
          written.push({ collection: op.collection, id: op.id, version: next, data: op.data, updatedAt: iso });
          changes.push({ collection: op.collection, id: op.id, version: next, op: "put" });
        } else if (version !== null) {
          current.set(key, null);
          final.set(key, null);
          changes.push({ collection: op.collection, id: op.id, version: 0, op: "delete" });
        }
      }
      const models: AnyBulkWriteOperation<DocRecord>[] = [...final].map(([key, record]) =>
        record
          ? { replaceOne: { filter: { _id: key }, replacement: record, upsert: true } }
          : { deleteOne: { filter: { _id: key } } },
      );
      if (models.length > 0) await this.docs.bulkWrite(models, { session, ordered: true });
    }
    if (audit.length > 0) await this.audit.insertMany(audit.map(auditRecord), { session });
    if (changes.length > 0) await this.announce(session, token, changes);
    return { written, changes };
  }

  /** Logs `changes` in `changes` under the write's token, numbered when replicas poll. */
  private async announce(session: ClientSession, token: string, changes: Change[]): Promise<void> {
    const record: ChangeRecord = { _id: token, c: changes.map((c) => [c.collection, c.id, c.version]), at: new Date() };
    if (this.mode === "poll") {
      const counter = await this.meta.findOneAndUpdate({ _id: "seq" }, { $inc: { n: 1 } }, { session, upsert: true, returnDocument: "after" });
      record.seq = counter!.n!;
    }
    await this.changes.insertOne(record, { session });
  }

  /**
   * Logs a record of no changes and waits for it: the change stream (and a
   * poll, by number) delivers the log in commit order, so when it arrives,
   * every write committed before it has reached this replica's watchers.
   */
  async sync(): Promise<void> {
    this.assertOpen();
    if (!this.feedUp) {
      // Records may be missed until the feed is back: only reading again is sure.
      this.watchers.resync();
      return;
    }
    const token = Bun.randomUUIDv7();
    const echo = this.echoes.expect(token);
    try {
      await this.transaction((session) => this.announce(session, token, []));
    } catch (error) {
      echo.cancel();
      throw isConnectionError(error) ? this.unavailable(error) : error;
    }
    if (this.mode === "poll") void this.poll();
    if (!(await echo.wait)) this.watchers.resync();
  }

  async queryAudit(query: AuditQuery): Promise<AuditEntry[]> {
    if (query.limit <= 0) return [];
    const records = await this.run(() =>
      this.audit.find(auditFilter(query), { projection: { entry: 1 } }).sort({ _id: -1 }).limit(query.limit).toArray(),
    );
    return records.map((record) => JSON.parse(record.entry) as AuditEntry);
  }

  async pruneAudit(before: string): Promise<number> {
    const result = await this.run(() => this.audit.deleteMany({ time: { $lt: before } }));
    return result.deletedCount;
  }

  async collections(): Promise<string[]> {
    // Sorted by the server, byte-wise like the other stores' ORDER BY.
    const rows = await this.run(() =>
      this.docs.aggregate<{ _id: string }>([{ $group: { _id: "$collection" } }, { $sort: { _id: 1 } }]).toArray(),
    );
    return rows.map((row) => row._id);
  }

  async restore(docs: Doc[], audit: AuditEntry[]): Promise<void> {
    if (docs.length === 0 && audit.length === 0) return;
    try {
      await this.run(() =>
        this.transaction(async (session) => {
          if (docs.length > 0) await this.docs.insertMany(docs.map(toRecord), { session });
          if (audit.length > 0) await this.audit.insertMany(audit.map(auditRecord), { session });
        }),
      );
    } catch (error) {
      if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) {
        throw new ConflictError(`The target already holds a record being restored: ${error.message}`, "restore_conflict");
      }
      throw error;
    }
  }

  /** One command: health answers promptly with the current state. */
  async ping(): Promise<void> {
    await this.run(() => this.db.command({ ping: 1 }));
  }

  protected async release(): Promise<void> {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    await this.stream?.close().catch(() => {});
    await this.polling?.catch(() => {});
    await this.client.close().catch(() => {});
  }
}
