/**
 * External Store adapter for MongoDB and compatible servers (Amazon
 * DocumentDB, FerretDB) through the official `mongodb` driver. Any number of
 * server replicas share one database. It uses no multi-document transaction,
 * no change stream, no TTL index and no conditional update: FerretDB 1.x has
 * none of them, and its updates are not atomic (a filtered update reads, then
 * writes by _id: of 20 racing compare-and-swap updates up to 20 "win"). The
 * one atomic step every such server offers is inserting a document under a
 * unique key, and everything here is built on it:
 * - a write is one entry of `log`, inserted under `_id` = the next number
 *   (15 digits): the commit. A writer first reads the log up to its end
 *   (applying what is not applied yet), checks every guard against the
 *   records as of that number, and inserts the entry at the number after it;
 *   a duplicate key means another write took that number first, and the
 *   writer reads again and re-checks. So writes are serialised cluster-wide,
 *   compare-and-swap holds across replicas ("absent" guards included), and a
 *   batch is all or nothing, audit entries included: the entry holds the
 *   final record of every document it touches and its audit entries (in
 *   `log.body`, or, past INLINE_CHARS, in `chunks` inserted before the entry).
 * - records are immutable rows of `docs`, one per document and log number:
 *   collection, id, seq, version (0 = deleted), data (the exact JSON text, so
 *   documents round-trip like the embedded store: key order, "\u0000" keys
 *   and lone surrogates included, none of which BSON keeps) and updatedAt.
 *   Applying an entry inserts its rows and audit entries (a duplicate is one
 *   already applied) and marks it applied; any replica may apply any entry,
 *   any number of times, in any order, with the same outcome. A read first
 *   reads the log to its end, applying what a writer left unapplied (it
 *   stopped between its commit and applying it), then reads the newest row of
 *   each document at or below that number: it sees every write acknowledged
 *   anywhere before it and no part of one still being applied.
 * - a write is acknowledged once its entry is stored (majority, journaled):
 *   a crash at any moment loses nothing acknowledged, and leaves either no
 *   entry (nothing of the write) or an entry that the next read or write of
 *   any replica applies whole.
 * - the change feed is the log: every replica reads it by number every
 *   POLL_MS (and before every read and write), and hands each entry's changes
 *   to its watchers in order, its own writes included, once. A write resolves
 *   after its own entry reached this replica's watchers. A number missing
 *   from the log (entries removed after LOG_RETENTION before this replica read
 *   them) makes the watchers resync.
 * - maintenance on every replica removes, with delays no reader or writer
 *   depends on for safety: rows superseded by a later row (after
 *   SUPERSEDED_MS, so a read already at an older number still finds them),
 *   log entries past LOG_RETENTION (never the newest: it holds the next
 *   number), payload chunks of writes that never committed (their number is
 *   taken by a void entry first when nothing took it), and rows of deleted
 *   documents after TOMBSTONE_MS.
 * - an unreachable database is an outage, not a crash: operations then throw
 *   StorageUnavailableError (503 + Retry-After at the edge); `connect`
 *   returns a store that keeps trying to open in the background. A commit
 *   whose answer was lost is read back; one whose outcome cannot be learned is
 *   reported as unknown, never as success.
 */
import {
  type Collection,
  type Db,
  type Filter,
  MongoBulkWriteError,
  MongoClient,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
} from "mongodb";
import { ConflictError } from "../errors.ts";
import { type ConnectOptions, ExternalStore } from "./external.ts";
import { checkGuard } from "./guard.ts";
import type { AuditEntry, AuditQuery, Change, Doc, ListOptions, Store, WriteOp } from "./store.ts";

/** The layout this server knows. 1 was the transactional layout (docs keyed by document, a `changes` log): not read. */
const SCHEMA_VERSION = 2;
/** Digits of a log number in `log._id`: zero-padded, so the string order is the number order. */
const SEQ_DIGITS = 15;
/** The most log entries one read of the log takes. */
const LOG_BATCH = 1000;
/** Ids per query of getMany and of a write's read of its documents. */
const IDS_PER_QUERY = 1000;
/** An entry's body up to this many UTF-16 units is kept in the entry (at most 6 MB of UTF-8, under the 16 MB document limit)... */
const INLINE_CHARS = 2_000_000;
/** ...a longer one in `chunks` of this many. */
const CHUNK_CHARS = 2_000_000;
/** Times a write may lose the race for the next log number before it gives up as stalled. */
const MAX_ATTEMPTS = 50;
/** Entries maintenance handles per step and round. */
const MAINTAIN_BATCH = 200;

/** Server error codes of a server that went away, is stepping down or shutting down (the operation did not run, or its outcome is unknown). */
const CONNECTION_CODES = new Set([6, 7, 89, 91, 189, 9001, 10107, 11600, 11602, 13435, 13436]);
/** Socket and name-resolution failures outside the driver's own error classes (a mongodb+srv:// name's SRV lookup). */
const NETWORK_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ESERVFAIL"]);
/** AuthenticationFailed: the user may not be set up yet, which an operator fixes while the server waits. */
const AUTHENTICATION_FAILED = 18;
/** DuplicateKey. */
const DUPLICATE_KEY = 11000;

/** The delays of the log's upkeep; none of them is needed for safety, only for how soon things happen. */
export interface LogTimings {
  /** How often a replica reads the log for other replicas' writes (POLL_MS). */
  pollMs: number;
  /** How long a poll leaves an unapplied entry to its own writer before applying it itself. */
  applyGraceMs: number;
  /** How often a replica runs maintenance. */
  maintainMs: number;
  /** How long rows stay after a later row superseded them (SUPERSEDED_MS): reads already at an older number still find them. */
  supersededMs: number;
  /** How long log entries are kept (LOG_RETENTION): a replica that reads the log later than that resyncs its watchers. */
  retentionMs: number;
  /**
   * Age after which payload chunks are looked at as perhaps left by a writer
   * that never committed: past retentionMs, when a committed entry's chunks
   * have mostly gone with it.
   */
  orphanMs: number;
  /** How long the row of a deleted document stays (TOMBSTONE_MS). */
  tombstoneMs: number;
}

export const LOG_TIMINGS: LogTimings = {
  pollMs: 250,
  applyGraceMs: 2000,
  maintainMs: 60_000,
  supersededMs: 60_000,
  retentionMs: 3_600_000,
  orphanMs: 7_200_000,
  tombstoneMs: 86_400_000,
};

/** One document at one log number. */
interface RowRecord {
  /** The JSON text of [collection, id, seq]: unique, and free of the NUL a joined key would hold (FerretDB on PostgreSQL refuses NUL). */
  _id: string;
  collection: string;
  id: string;
  seq: number;
  /** 0: the document was deleted at this number. */
  version: number;
  /** The document's JSON text (absent when deleted). */
  data?: string;
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

/** One committed write. */
export interface LogRecord {
  /** The log number, SEQ_DIGITS digits. */
  _id: string;
  /** The writer's own id for the write, which tells its entry from another one at the same number. */
  token: string;
  at: Date;
  /** What the write changed, for the watchers: the JSON text of [[collection, id, version (0 = delete)], ...] (FerretDB stores no nested arrays). */
  c: string;
  /** The body's JSON text (EntryBody), or... */
  body?: string;
  /** ...the number of `chunks` holding it. */
  chunks?: number;
  /** Its rows and audit entries are stored. */
  applied: boolean;
  /** The rows it superseded are removed. */
  collected?: boolean;
  /** A number taken by maintenance from a writer that never committed: no write. */
  void?: boolean;
}

interface ChunkRecord {
  _id: string;
  token: string;
  /** The log number its writer meant to commit at. */
  seq: number;
  i: number;
  text: string;
  at: Date;
}

interface MetaRecord {
  _id: string;
  version: number;
}

/** The final state of one document touched by a write: [collection, id, version (0 = deleted), JSON text or null, updatedAt]. */
type BodyRow = [string, string, number, string | null, string];

/** What applying an entry stores. */
export interface EntryBody {
  rows: BodyRow[];
  audit: AuditEntry[];
  /** The rows (ids) the new rows supersede, removed after SUPERSEDED_MS. */
  prev: string[];
}

interface Planned<R> {
  body: EntryBody;
  changes: Change[];
  result: R;
}

export interface MongoStoreOptions {
  /** The database to use when the URI names none (database.database). */
  database?: string;
  /** Seconds to wait for a server to answer before an operation fails as unavailable. */
  connectionTimeout?: number;
  /** The log's upkeep delays (LOG_TIMINGS); tests shorten them. */
  timings?: Partial<LogTimings>;
}

export interface MongoConnectOptions extends MongoStoreOptions, ConnectOptions {}

/** A log number as `log._id`. */
export function seqId(seq: number): string {
  return String(seq).padStart(SEQ_DIGITS, "0");
}

/** The key of a document in maps: the JSON text of [collection, id]. */
export function docKey(collection: string, id: string): string {
  return JSON.stringify([collection, id]);
}

/** The `_id` of a document's row at log number `seq`. */
export function rowId(collection: string, id: string, seq: number): string {
  return JSON.stringify([collection, id, seq]);
}

/**
 * `text` in pieces of at most `size` (2 or more) UTF-16 units, never between
 * the two halves of a surrogate pair (BSON stores UTF-8: a lone half would become U+FFFD).
 */
export function splitText(text: string, size: number): string[] {
  if (size < 2) throw new RangeError("pieces of text hold at least 2 UTF-16 units");
  const parts: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

/** The newest row of each document among `rows`, by docKey. */
export function newestRows<R extends Pick<RowRecord, "collection" | "id" | "seq">>(rows: Iterable<R>): Map<string, R> {
  const newest = new Map<string, R>();
  for (const row of rows) {
    const key = docKey(row.collection, row.id);
    const seen = newest.get(key);
    if (!seen || row.seq > seen.seq) newest.set(key, row);
  }
  return newest;
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

/** The row filter of `list` (by collection, prefix range and cursor), or null when its limit reads nothing. */
export function listFilter(collection: string, options: ListOptions): Filter<RowRecord> | null {
  if (options.limit !== undefined && options.limit <= 0) return null;
  const range: { $gte?: string; $lt?: string; $gt?: string } = {};
  if (options.prefix !== undefined) {
    range.$gte = options.prefix;
    range.$lt = options.prefix + "\u{10FFFF}";
  }
  if (options.after !== undefined) range.$gt = options.after;
  return Object.keys(range).length > 0 ? { collection, id: range } : { collection };
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

/** The `c` of a log entry announcing `changes`. */
export function changesText(changes: Change[]): string {
  return JSON.stringify(changes.map((change) => [change.collection, change.id, change.version]));
}

/** The changes a log entry announces; a malformed entry announces nothing (null). */
export function changesOf(record: Partial<Pick<LogRecord, "_id" | "c">> | null | undefined): Change[] | null {
  if (!record || typeof record._id !== "string" || typeof record.c !== "string") return null;
  let list: unknown;
  try {
    list = JSON.parse(record.c);
  } catch {
    return null;
  }
  if (!Array.isArray(list)) return null;
  const changes: Change[] = [];
  for (const entry of list) {
    if (!Array.isArray(entry) || entry.length !== 3) return null;
    const [collection, id, version] = entry;
    if (typeof collection !== "string" || typeof id !== "string" || typeof version !== "number") return null;
    changes.push({ collection, id, version, op: version === 0 ? "delete" : "put" });
  }
  return changes;
}

/** True for a failure of the connection or of the server's availability (not of the operation itself). */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true;
  if (error instanceof MongoServerError) return CONNECTION_CODES.has(Number(error.code));
  return error instanceof Error && NETWORK_CODES.has(String((error as { code?: unknown }).code));
}

/** True when every failure of an insert was a duplicate key (the document is there already). */
export function isDuplicateKey(error: unknown): boolean {
  if (error instanceof MongoBulkWriteError) {
    const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    return errors.length > 0 && errors.every((e) => e.code === DUPLICATE_KEY);
  }
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

function auditRecord(entry: AuditEntry): AuditRecord {
  return { _id: entry.id, time: entry.time, actor: entry.actor, action: entry.action, entry: JSON.stringify(entry) };
}

function toDoc<T>(row: RowRecord): Doc<T> {
  return {
    collection: row.collection,
    id: row.id,
    version: Number(row.version),
    data: JSON.parse(row.data!) as T,
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

function dataText(collection: string, id: string, data: unknown): string {
  const text = JSON.stringify(data);
  if (text === undefined) throw new TypeError(`${collection}/${id}: the document is not JSON`);
  return text;
}

/** The rows an entry's body stores at `seq`. */
function rowsOf(body: EntryBody, seq: number): RowRecord[] {
  return body.rows.map(([collection, id, version, data, updatedAt]) => ({
    _id: rowId(collection, id, seq),
    collection,
    id,
    seq,
    version,
    ...(data === null ? {} : { data }),
    updatedAt: new Date(updatedAt),
  }));
}

/** A deferred run of the log reader that callers arriving while one runs share. */
interface NextRound {
  force: boolean;
  done: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

export class MongoStore extends ExternalStore implements Store {
  readonly backend = "mongodb";
  private readonly client: MongoClient;
  private readonly db: Db;
  private readonly docs: Collection<RowRecord>;
  private readonly audit: Collection<AuditRecord>;
  private readonly log: Collection<LogRecord>;
  private readonly chunks: Collection<ChunkRecord>;
  private readonly meta: Collection<MetaRecord>;
  private readonly timings: LogTimings;
  /** The number of the last log entry handed to the watchers: every entry up to it is applied. */
  private lastSeq = 0;
  /** The changes of this replica's entries being committed, by token, documents included: the log carries only their keys. */
  private readonly ownChanges = new Map<string, Change[]>();
  private round: Promise<void> | null = null;
  private next: NextRound | null = null;
  /** This replica's writes, one at a time: they would only race each other for the next number. */
  private writing: Promise<unknown> = Promise.resolve();
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private maintainTimer: ReturnType<typeof setTimeout> | null = null;
  private maintaining: Promise<void> | null = null;
  /** False after a poll failed, until one succeeds (so an outage is logged once). */
  private feedUp = true;

  /** Opens the store: checks the schema, creates indexes, applies what a stopped writer left. Throws when it cannot. */
  static open(uri: string, options: MongoStoreOptions = {}): Promise<MongoStore> {
    return new MongoStore(uri, options).openNow();
  }

  /**
   * The store at once, opening in the background: while the database is
   * unreachable it tries again with exponential backoff and jitter. `ready`
   * resolves once it is open, and rejects on an error that waiting cannot fix
   * (a schema this server does not read) or when closed first.
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
      // Acknowledged means on a majority, journaled; reads see only that, from the primary.
      writeConcern: { w: "majority", journal: true },
      readConcern: { level: "majority" },
      readPreference: "primary",
      ...(inUri("serverSelectionTimeoutMS") ? {} : { serverSelectionTimeoutMS: timeoutMs }),
      ...(inUri("connectTimeoutMS") ? {} : { connectTimeoutMS: timeoutMs }),
    });
    const name = uriDatabase(uri) || options.database || "svc";
    this.db = this.client.db(name);
    this.docs = this.db.collection<RowRecord>("docs");
    this.audit = this.db.collection<AuditRecord>("audit");
    this.log = this.db.collection<LogRecord>("log");
    this.chunks = this.db.collection<ChunkRecord>("chunks");
    this.meta = this.db.collection<MetaRecord>("meta");
    this.timings = { ...LOG_TIMINGS, ...options.timings };
  }

  protected async attach(): Promise<void> {
    // Explicitly: a failed implicit connect (by a first operation) closes the client for good, a failed connect() does not.
    await this.client.connect();
    await this.migrate();
    await this.recover();
    this.schedulePoll();
    this.scheduleMaintenance();
  }

  /** Checks (or records, on an empty database) the schema version, then creates the indexes (idempotent). */
  private async migrate(): Promise<void> {
    let schema = await this.meta.findOne({ _id: "schema" });
    if (!schema) {
      try {
        await this.meta.insertOne({ _id: "schema", version: SCHEMA_VERSION });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      schema = await this.meta.findOne({ _id: "schema" });
    }
    const version = Number(schema?.version ?? 0);
    if (version > SCHEMA_VERSION) {
      throw new Error(`The database has schema version ${version}, newer than this server knows (${SCHEMA_VERSION}); upgrade the server.`);
    }
    if (version < SCHEMA_VERSION) {
      throw new Error(
        `The database has schema version ${version}, an earlier layout this server does not read: copy its records out with the ` +
          "svc release that wrote them (svc-server migrate --from external --to embedded), then into an empty database with this one.",
      );
    }
    await this.docs.createIndex({ collection: 1, id: 1, seq: -1 }, { name: "collection_id_seq" });
    await this.audit.createIndex({ time: 1 }, { name: "time" });
    await this.chunks.createIndex({ token: 1, i: 1 }, { name: "token_i" });
  }

  /** Applies every entry a writer committed and did not apply (it stopped in between), and starts the feed at the log's end. */
  private async recover(): Promise<void> {
    const [newest] = await this.log
      .find({}, { projection: { _id: 1 } })
      .sort({ _id: -1 })
      .limit(1)
      .toArray();
    const end = newest ? Number(newest._id) : 0;
    const left = await this.log
      .find({ applied: false, _id: { $lte: seqId(end) } }, { projection: { body: 0 } })
      .sort({ _id: 1 })
      .toArray();
    for (const entry of left) await this.apply(entry);
    this.lastSeq = end;
  }

  /**
   * Reads the log to its end, applying and handing on each entry in order.
   * `force`: apply every unapplied entry now (a read or write needs them);
   * else a young one is left to its writer for applyGraceMs. Callers arriving
   * while a round runs share the next round, which starts after it: each
   * caller's round reads the log after the call.
   */
  private catchUp(force: boolean): Promise<void> {
    if (!this.round) return this.startRound(force);
    if (this.next) {
      this.next.force ||= force;
      return this.next.done;
    }
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((yes, no) => ((resolve = yes), (reject = no)));
    this.next = { force, done, resolve, reject };
    return done;
  }

  private startRound(force: boolean): Promise<void> {
    const round = this.readLog(force).finally(() => {
      this.round = null;
      const next = this.next;
      this.next = null;
      if (next) this.startRound(next.force).then(next.resolve, next.reject);
    });
    this.round = round;
    return round;
  }

  private async readLog(force: boolean): Promise<void> {
    for (;;) {
      const entries = await this.log
        .find({ _id: { $gt: seqId(this.lastSeq) } }, { projection: { body: 0 } })
        .sort({ _id: 1 })
        .limit(LOG_BATCH)
        .toArray();
      for (const entry of entries) {
        if (!entry.applied) {
          if (!force && Date.now() - new Date(entry.at).getTime() < this.timings.applyGraceMs) return;
          await this.apply(entry);
        }
        const seq = Number(entry._id);
        // A skipped number: entries removed after retentionMs before this replica read them.
        const gap = seq !== this.lastSeq + 1;
        this.lastSeq = seq;
        // This replica's own entry: its changes as planned, documents included (Change.data).
        const changes = this.ownChanges.get(entry.token) ?? changesOf(entry);
        if (changes && changes.length > 0) this.watchers.emit(changes, new Date(entry.at).getTime());
        if (gap) this.watchers.resync();
      }
      if (entries.length < LOG_BATCH) return;
    }
  }

  /** Stores an entry's rows and audit entries and marks it applied: any number of times, by any replica, with one outcome. */
  private async apply(entry: LogRecord, text?: string): Promise<void> {
    if (!entry.void) {
      const body = JSON.parse(text ?? (await this.bodyOf(entry))) as EntryBody;
      await insertAll(this.docs, rowsOf(body, Number(entry._id)));
      await insertAll(this.audit, body.audit.map(auditRecord));
    }
    await this.log.updateOne({ _id: entry._id }, { $set: { applied: true } });
  }

  private async bodyOf(entry: Pick<LogRecord, "_id" | "token" | "chunks">): Promise<string> {
    if (entry.chunks) {
      const parts = await this.chunks.find({ token: entry.token }).sort({ i: 1 }).toArray();
      if (parts.length !== entry.chunks) {
        throw new Error(`svc store: log entry ${Number(entry._id)} is in ${entry.chunks} chunks and ${parts.length} are stored`);
      }
      return parts.map((part) => part.text).join("");
    }
    const stored = await this.log.findOne({ _id: entry._id }, { projection: { body: 1 } });
    if (typeof stored?.body !== "string") throw new Error(`svc store: log entry ${Number(entry._id)} has no body`);
    return stored.body;
  }

  private schedulePoll(): void {
    if (this.closed || this.pollTimer) return;
    this.pollTimer = setTimeout(() => {
      this.pollTimer = null;
      void this.poll();
    }, this.timings.pollMs);
  }

  private async poll(): Promise<void> {
    try {
      await this.catchUp(false);
      this.feedUp = true;
    } catch (error) {
      // Nothing is lost while the database is away: the next poll goes on from the same number.
      if (!this.closed && this.feedUp) console.error("svc store: reading the MongoDB log failed", (error as Error).message);
      this.feedUp = false;
    }
    this.schedulePoll();
  }

  private scheduleMaintenance(): void {
    if (this.closed || this.maintainTimer) return;
    this.maintainTimer = setTimeout(() => {
      this.maintainTimer = null;
      this.maintaining = this.maintain()
        .catch((error: Error) => {
          if (!this.closed && !isConnectionError(error)) console.error("svc store: MongoDB log maintenance failed", error.message);
        })
        .finally(() => {
          this.maintaining = null;
          this.scheduleMaintenance();
        });
    }, this.timings.maintainMs);
  }

  /** Removes what no read needs any more (see the file's comment); safe at any moment, on any number of replicas at once. */
  private async maintain(): Promise<void> {
    const now = Date.now();
    const before = (ms: number) => new Date(now - ms);
    // Rows superseded by an entry applied a while ago.
    const due = await this.log
      .find({ applied: true, collected: { $ne: true }, at: { $lt: before(this.timings.supersededMs) } }, { projection: { body: 0 } })
      .sort({ _id: 1 })
      .limit(MAINTAIN_BATCH)
      .toArray();
    for (const entry of due) {
      if (this.closed) return;
      if (!entry.void) {
        const body = JSON.parse(await this.bodyOf(entry)) as EntryBody;
        if (body.prev.length > 0) await this.docs.deleteMany({ _id: { $in: body.prev } });
      }
      await this.log.updateOne({ _id: entry._id }, { $set: { collected: true } });
    }
    // Entries past retention, with their chunks first; never the newest, which holds the next number.
    const old = await this.log
      .find({ collected: true, at: { $lt: before(this.timings.retentionMs) }, _id: { $lt: seqId(this.lastSeq) } }, { projection: { body: 0 } })
      .limit(MAINTAIN_BATCH)
      .toArray();
    const chunked = old.filter((entry) => entry.chunks).map((entry) => entry.token);
    if (chunked.length > 0) await this.chunks.deleteMany({ token: { $in: chunked } });
    if (old.length > 0) await this.log.deleteMany({ _id: { $in: old.map((entry) => entry._id) } });
    // Chunks of writes that never committed: their number is taken (by another write, or by a void entry here).
    const stale = await this.chunks
      .find({ i: 0, at: { $lt: before(this.timings.orphanMs) } }, { projection: { token: 1, seq: 1 } })
      .limit(MAINTAIN_BATCH)
      .toArray();
    for (const { token, seq } of stale) {
      if (this.closed) return;
      const entry = await this.log.findOne({ _id: seqId(seq) }, { projection: { token: 1 } });
      if (entry?.token === token) continue; // committed: kept while its entry is
      if (!entry && seq > this.lastSeq) {
        // Nothing took the number: take it, so that the writer, should it still commit, loses instead.
        const voided: LogRecord = { _id: seqId(seq), token: `void-${Bun.randomUUIDv7()}`, at: new Date(), c: "[]", applied: true, collected: true, void: true };
        try {
          await this.log.insertOne(voided);
        } catch (error) {
          if (isDuplicateKey(error)) continue; // committed meanwhile: looked at again next round
          throw error;
        }
      }
      await this.chunks.deleteMany({ token });
    }
    // Deleted documents' rows, once the rows they superseded are gone (their entry is below every uncollected one).
    const [uncollected] = await this.log
      .find({ collected: { $ne: true } }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(1)
      .toArray();
    const below = uncollected ? Number(uncollected._id) : Number.MAX_SAFE_INTEGER;
    await this.docs.deleteMany({ version: 0, seq: { $lt: below }, updatedAt: { $lt: before(this.timings.tombstoneMs) } });
  }

  /** Runs one operation, turning an outage into StorageUnavailableError. */
  private async run<T>(fn: () => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      return await fn();
    } catch (error) {
      throw isConnectionError(error) ? this.unavailable(error) : error;
    }
  }

  /** Reads the log to its end (applying what is unapplied) and answers its number: the snapshot a read reads at. */
  private async snapshot(): Promise<number> {
    await this.catchUp(true);
    return this.lastSeq;
  }

  /** The newest row at or below `at` of each of the documents, by docKey. */
  private async rowsAt(keys: Iterable<[string, string]>, at: number): Promise<Map<string, RowRecord>> {
    const byCollection = new Map<string, string[]>();
    for (const [collection, id] of keys) {
      const ids = byCollection.get(collection) ?? [];
      ids.push(id);
      byCollection.set(collection, ids);
    }
    const rows: RowRecord[] = [];
    for (const [collection, ids] of byCollection) {
      for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
        rows.push(...(await this.docs.find({ collection, id: { $in: ids.slice(i, i + IDS_PER_QUERY) }, seq: { $lte: at } }).toArray()));
      }
    }
    return newestRows(rows);
  }

  async get<T>(collection: string, id: string): Promise<Doc<T> | null> {
    return this.run(async () => {
      const at = await this.snapshot();
      const [row] = await this.docs
        .find({ collection, id, seq: { $lte: at } })
        .sort({ seq: -1 })
        .limit(1)
        .toArray();
      return row && row.version > 0 ? toDoc<T>(row) : null;
    });
  }

  async getMany<T>(collection: string, ids: readonly string[]): Promise<Map<string, Doc<T>>> {
    return this.run(async () => {
      const found = new Map<string, Doc<T>>();
      if (ids.length === 0) return found;
      const at = await this.snapshot();
      const rows = await this.rowsAt(
        [...new Set(ids)].map((id) => [collection, id] as [string, string]),
        at,
      );
      for (const row of rows.values()) if (row.version > 0) found.set(row.id, toDoc<T>(row));
      return found;
    });
  }

  async list<T>(collection: string, options: ListOptions = {}): Promise<Doc<T>[]> {
    const filter = listFilter(collection, options);
    if (!filter) return [];
    return this.run(async () => {
      const at = await this.snapshot();
      const docs: Doc<T>[] = [];
      let previous: string | null = null;
      // Each document's rows together, newest first: the first is the one at the snapshot.
      for await (const row of this.docs.find({ ...filter, seq: { $lte: at } }).sort({ id: 1, seq: -1 })) {
        if (row.id === previous) continue;
        previous = row.id;
        if (row.version === 0) continue;
        docs.push(toDoc<T>(row));
        if (options.limit !== undefined && docs.length >= options.limit) break;
      }
      return docs;
    });
  }

  async count(collection: string): Promise<number> {
    return this.run(async () => {
      const at = await this.snapshot();
      const rows = await this.docs.find({ collection, seq: { $lte: at } }, { projection: { collection: 1, id: 1, seq: 1, version: 1 } }).toArray();
      return [...newestRows(rows).values()].filter((row) => row.version > 0).length;
    });
  }

  async collections(): Promise<string[]> {
    return this.run(async () => {
      const at = await this.snapshot();
      const rows = await this.docs.find({ seq: { $lte: at } }, { projection: { collection: 1, id: 1, seq: 1, version: 1 } }).toArray();
      const names = new Set<string>();
      for (const row of newestRows(rows).values()) if (row.version > 0) names.add(row.collection);
      // Byte-wise, like the other stores' ORDER BY.
      return [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    });
  }

  async write(ops: WriteOp[], audit: AuditEntry[] = []): Promise<Doc[]> {
    this.assertOpen();
    if (ops.length === 0 && audit.length === 0) return [];
    return this.commit(async (at) => {
      const keys = new Map(ops.map((op) => [docKey(op.collection, op.id), [op.collection, op.id] as [string, string]]));
      const current = await this.rowsAt(keys.values(), at);
      const version = new Map<string, number | null>();
      for (const [key, row] of current) version.set(key, row.version > 0 ? row.version : null);
      /** The final state of every touched document: its data's JSON text, or null when deleted. */
      const final = new Map<string, { op: WriteOp; version: number; text: string | null }>();
      const written: Doc[] = [];
      const changes: Change[] = [];
      const updatedAt = new Date().toISOString();
      for (const op of ops) {
        const key = docKey(op.collection, op.id);
        const now = version.get(key) ?? null;
        checkGuard(op, now);
        if (op.op === "put") {
          const next = (now ?? 0) + 1;
          version.set(key, next);
          final.set(key, { op, version: next, text: dataText(op.collection, op.id, op.data) });
          written.push({ collection: op.collection, id: op.id, version: next, data: op.data, updatedAt });
          changes.push({ collection: op.collection, id: op.id, version: next, op: "put", data: op.data });
        } else if (now !== null) {
          version.set(key, null);
          final.set(key, { op, version: 0, text: null });
          changes.push({ collection: op.collection, id: op.id, version: 0, op: "delete" });
        }
      }
      const rows: BodyRow[] = [];
      const prev: string[] = [];
      for (const [key, state] of final) {
        const before = current.get(key);
        // A document created and deleted within this write leaves no row.
        if (state.text === null && (!before || before.version === 0)) continue;
        rows.push([state.op.collection, state.op.id, state.version, state.text, updatedAt]);
        if (before) prev.push(before._id);
      }
      return { body: { rows, audit, prev }, changes, result: written };
    });
  }

  async restore(docs: Doc[], audit: AuditEntry[]): Promise<void> {
    if (docs.length === 0 && audit.length === 0) return;
    const conflict = (what: string) => new ConflictError(`The target already holds a record being restored: ${what}`, "restore_conflict");
    await this.commit(async (at) => {
      const keys = new Map(docs.map((doc) => [docKey(doc.collection, doc.id), [doc.collection, doc.id] as [string, string]]));
      if (keys.size < docs.length) throw conflict("a document appears twice in the batch");
      const current = await this.rowsAt(keys.values(), at);
      const held = [...current.values()].find((row) => row.version > 0);
      if (held) throw conflict(`a document of collection ${JSON.stringify(held.collection)}`);
      const ids = audit.map((entry) => entry.id);
      if (new Set(ids).size < ids.length) throw conflict("an audit entry appears twice in the batch");
      for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
        const [existing] = await this.audit
          .find({ _id: { $in: ids.slice(i, i + IDS_PER_QUERY) } }, { projection: { _id: 1 } })
          .limit(1)
          .toArray();
        if (existing) throw conflict(`audit entry ${existing._id}`);
      }
      const rows: BodyRow[] = docs.map((doc) => [doc.collection, doc.id, doc.version, dataText(doc.collection, doc.id, doc.data), doc.updatedAt]);
      // A restored document's row supersedes the row of its deletion, if any.
      const prev = [...current.values()].map((row) => row._id);
      // Silent: a restore announces nothing on the change feed.
      return { body: { rows, audit, prev }, changes: [], result: undefined };
    });
  }

  /**
   * Commits one write: reads the log to its end, plans the entry against the
   * records as of that number (`plan` throws ConflictError on a failed
   * guard), and inserts it at the next number; when another write took that
   * number first, reads and plans again. Then applies the entry and hands it
   * to the watchers before answering.
   */
  private commit<R>(plan: (at: number) => Promise<Planned<R>>): Promise<R> {
    const run = this.writing.then(() => this.commitNow(plan));
    this.writing = run.catch(() => {});
    return run;
  }

  private async commitNow<R>(plan: (at: number) => Promise<Planned<R>>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const at = await this.run(() => this.snapshot());
      const planned = await this.run(() => plan(at));
      // Every guard held and nothing changes (deletes of absent documents): no entry.
      if (planned.body.rows.length === 0 && planned.body.audit.length === 0 && planned.changes.length === 0) return planned.result;
      const token = Bun.randomUUIDv7();
      const text = JSON.stringify(planned.body);
      const parts = text.length > INLINE_CHARS ? splitText(text, CHUNK_CHARS) : null;
      const entry: LogRecord = {
        _id: seqId(at + 1),
        token,
        at: new Date(),
        c: changesText(planned.changes),
        applied: false,
        ...(parts ? { chunks: parts.length } : { body: text }),
      };
      if (parts) {
        const records = parts.map((part, i): ChunkRecord => ({ _id: `${token}/${i}`, token, seq: at + 1, i, text: part, at: entry.at }));
        await this.run(() => this.chunks.insertMany(records));
      }
      // Set before the insert: a read of the log (a poll) may hear the entry before the insert answers.
      this.ownChanges.set(token, planned.changes);
      let inserted: boolean;
      try {
        inserted = await this.insertEntry(entry);
      } catch (error) {
        this.ownChanges.delete(token);
        throw error;
      }
      if (!inserted) {
        this.ownChanges.delete(token);
        if (parts) await this.chunks.deleteMany({ token }).catch(() => {}); // else maintenance removes them
        if (attempt >= MAX_ATTEMPTS) throw this.stalled(`a write lost the race for the next log number ${MAX_ATTEMPTS} times`);
        // Two replicas taking turns settle at once; more back off a little, at random.
        if (attempt > 2) await Bun.sleep(Math.random() * Math.min(2 ** attempt, 100));
        continue;
      }
      try {
        await this.apply(entry, text);
        await this.catchUp(true);
      } catch (error) {
        // Committed all the same: the next read or write of any replica applies it and hands it on (without the documents).
        if (!isConnectionError(error)) console.error("svc store: applying a committed MongoDB log entry failed", (error as Error).message);
      } finally {
        this.ownChanges.delete(token);
      }
      return planned.result;
    }
  }

  /** Inserts the entry: true when it is committed, false when another write holds its number. */
  private async insertEntry(entry: LogRecord): Promise<boolean> {
    this.assertOpen();
    try {
      await this.log.insertOne(entry);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      if (!isConnectionError(error)) throw error;
      // The answer was lost: whether the entry landed is learned by reading its number back.
      let found: Pick<LogRecord, "token"> | null;
      try {
        found = await this.log.findOne({ _id: entry._id }, { projection: { token: 1 } });
      } catch {
        throw this.commitUnknown(error);
      }
      if (found) return found.token === entry.token;
      // Not there yet; the insert may still be on its way.
      throw this.commitUnknown(error);
    }
  }

  /** Resolves once this replica's watchers have heard every write committed before the call. */
  async sync(): Promise<void> {
    await this.run(() => this.catchUp(true));
  }

  async queryAudit(query: AuditQuery): Promise<AuditEntry[]> {
    if (query.limit <= 0) return [];
    return this.run(async () => {
      await this.snapshot();
      const records = await this.audit
        .find(auditFilter(query), { projection: { entry: 1 } })
        .sort({ _id: -1 })
        .limit(query.limit)
        .toArray();
      return records.map((record) => JSON.parse(record.entry) as AuditEntry);
    });
  }

  async pruneAudit(before: string): Promise<number> {
    const result = await this.run(() => this.audit.deleteMany({ time: { $lt: before } }));
    return result.deletedCount;
  }

  /** One command: health answers promptly with the current state. */
  async ping(): Promise<void> {
    await this.run(() => this.db.command({ ping: 1 }));
  }

  protected async release(): Promise<void> {
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.maintainTimer) clearTimeout(this.maintainTimer);
    this.pollTimer = this.maintainTimer = null;
    await this.round?.catch(() => {});
    await this.maintaining;
    await this.client.close().catch(() => {});
  }
}

/** Inserts every record that is not there yet (a duplicate key is a record some replica stored already). */
async function insertAll<T extends { _id: string }>(collection: Collection<T>, records: T[]): Promise<void> {
  if (records.length === 0) return;
  try {
    await collection.insertMany(records as never[], { ordered: false });
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
  }
}
