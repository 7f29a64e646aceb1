/**
 * The embedded store's document table, in its two layouts (server/store/sqlite.ts migrations 1 and 2):
 * a clustered WITHOUT ROWID table keyed by (collection, id), and a rowid table with a unique
 * (collection, id) index; and on the second, two ways of checking a put's guard: a read of the
 * version, then an upsert (what SqliteStore does), or one statement that checks as it writes and
 * returns the version (`INSERT … ON CONFLICT DO UPDATE … RETURNING version`: measured, not taken,
 * BENCHMARKS.md issue 36 third pass). On a file in the temp directory, in WAL mode with synchronous
 * FULL as the store runs, one process, no other load.
 *
 * Per variant: seed N collector records (1,500 bytes of JSON each, 1,000 a transaction); two
 * publishes, each N rendered bodies (8,000 bytes), then N targets and N history rows (400 bytes), in
 * transactions of 5,000 operations (a publish's write slice when this was first measured); then 30 presence-shaped
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

const WITHOUT_ROWID =
  "CREATE TABLE docs (collection TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID";
const ROWID =
  "CREATE TABLE docs (collection TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL); CREATE UNIQUE INDEX docs_key ON docs (collection, id)";
const VARIANTS: { name: string; schema: string; guard: "read" | "statement" }[] = [
  { name: "WITHOUT ROWID (migration 1), guard read first", schema: WITHOUT_ROWID, guard: "read" },
  { name: "rowid + unique index (migration 2), guard read first", schema: ROWID, guard: "read" },
  { name: "rowid + unique index (migration 2), guard in the statement", schema: ROWID, guard: "statement" },
];

const record = "x".repeat(1500);
const body = "y".repeat(8000);
const small = "z".repeat(400);
/** Ids spread over the key space as UUIDs are. */
const ids = Array.from({ length: count }, (_, i) => `${(Math.imul(i + 1, 2654435761) >>> 0).toString(16).padStart(8, "0")}-${i}`);

try {
  for (const [n, { name, schema, guard }] of VARIANTS.entries()) {
    const path = join(dir, `${n}.db`);
    const db = new Database(path, { create: true, strict: true });
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = FULL");
    db.run(schema);
    const version = db.query<{ version: number }, [string, string]>("SELECT version FROM docs WHERE collection = ? AND id = ?");
    const read = db.query("SELECT id, version, data, updated_at FROM docs WHERE collection = ? AND id = ?");
    const put = db.query(
      "INSERT INTO docs (collection, id, version, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (collection, id) DO UPDATE SET version = ?3, data = ?4, updated_at = ?5",
    );
    const upsert = db.query<{ version: number }, [string, string, string, string]>(
      "INSERT INTO docs (collection, id, version, data, updated_at) VALUES (?1, ?2, 1, ?3, ?4) ON CONFLICT (collection, id) DO UPDATE SET version = version + 1, data = ?3, updated_at = ?4 RETURNING version",
    );
    const write = (ops: [string, string, string][]) =>
      db.transaction(() => {
        for (const [collection, id, data] of ops) {
          if (guard === "statement") upsert.get(collection, id, data, "t");
          else put.run(collection, id, (version.get(collection, id)?.version ?? 0) + 1, data, "t");
        }
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
