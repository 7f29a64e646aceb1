/**
 * The embedded store's document table, in its two layouts (server/store/sqlite.ts migrations 1 and 2):
 * a clustered WITHOUT ROWID table keyed by (collection, id), and a rowid table with a unique
 * (collection, id) index. Same statements as SqliteStore (a guard read of the version, then an
 * upsert, in WAL mode with synchronous FULL), on a file in the temp directory, one process, no other load.
 *
 * Per layout: seed N collector records (1,500 bytes of JSON each, 1,000 a transaction); two
 * publishes, each N rendered bodies (8,000 bytes), then N targets and N history rows (400 bytes), in
 * transactions of 5,000 operations (a publish's write slice when this was measured); then 30 presence-shaped
 * flushes: 333 collector records read whole and written back in one transaction (collectors/presence.ts
 * before its coalescer took records from memory). Prints each phase's wall time.
 *
 * Usage: bun bench/store-layout.ts [documents=20000]
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const count = Number(process.argv[2] ?? 20_000);
const dir = mkdtempSync(join(tmpdir(), "svc-store-layout-"));

const LAYOUTS = {
  "WITHOUT ROWID (migration 1)":
    "CREATE TABLE docs (collection TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID",
  "rowid + unique index (migration 2)":
    "CREATE TABLE docs (collection TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL); CREATE UNIQUE INDEX docs_key ON docs (collection, id)",
};

const record = "x".repeat(1500);
const body = "y".repeat(8000);
const small = "z".repeat(400);
/** Ids spread over the key space as UUIDs are. */
const ids = Array.from({ length: count }, (_, i) => `${(Math.imul(i + 1, 2654435761) >>> 0).toString(16).padStart(8, "0")}-${i}`);

try {
  for (const [name, schema] of Object.entries(LAYOUTS)) {
    const path = join(dir, `${name.length}.db`);
    const db = new Database(path, { create: true, strict: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = FULL");
    db.run(schema);
    const version = db.query<{ version: number }, [string, string]>("SELECT version FROM docs WHERE collection = ? AND id = ?");
    const read = db.query("SELECT id, version, data, updated_at FROM docs WHERE collection = ? AND id = ?");
    const put = db.query(
      "INSERT INTO docs (collection, id, version, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (collection, id) DO UPDATE SET version = ?3, data = ?4, updated_at = ?5",
    );
    const write = (ops: [string, string, string][]) =>
      db.transaction(() => {
        for (const [collection, id, data] of ops) put.run(collection, id, (version.get(collection, id)?.version ?? 0) + 1, data, "t");
      })();
    const timed = (run: () => void) => {
      const start = performance.now();
      run();
      return `${Math.round(performance.now() - start)} ms`;
    };
    const seed = timed(() => {
      for (let i = 0; i < count; i += 1000) write(ids.slice(i, i + 1000).map((id) => ["collectors", id, record]));
    });
    const publishes = timed(() => {
      for (let publish = 1; publish <= 2; publish++) {
        const ops: [string, string, string][] = ids.map((id) => ["rendered", `h${publish}-${id}`, body]);
        for (const id of ids) ops.push(["collector_config", id, small], ["config_history", `${id}/${publish}`, small]);
        for (let i = 0; i < ops.length; i += 5000) write(ops.slice(i, i + 5000));
      }
    });
    const presence = timed(() => {
      for (let flush = 0; flush < 30; flush++) {
        const batch = ids.slice((flush * 333) % count, ((flush * 333) % count) + 333);
        for (const id of batch) read.get("collectors", id);
        write(batch.map((id) => ["collectors", id, record]));
      }
    });
    console.log(`${name}: seed ${seed}, two publishes ${publishes}, 30 presence flushes ${presence}`);
    db.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
