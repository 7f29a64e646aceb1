import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeContract } from "./contract.ts";
import { SqliteStore } from "./sqlite.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-sqlite-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

storeContract("sqlite", {
  open: async () => new SqliteStore(join(dir, `nested/${n++}/state.db`)),
  reopen: async (previous) => new SqliteStore((previous as SqliteStore).path),
});

describe("guarded puts", () => {
  test("one batch may write a document twice, the second put guarded by the version the first wrote", async () => {
    const store = new SqliteStore(join(dir, `nested/${n++}/state.db`));
    await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
    const written = await store.write([
      { op: "put", collection: "t", id: "a", data: 2, expect: 1 },
      { op: "put", collection: "t", id: "a", data: 3, expect: 2 },
      { op: "put", collection: "t", id: "b", data: 1, expect: "absent" },
      { op: "put", collection: "t", id: "b", data: 2 },
    ]);
    expect(written.map((doc) => doc.version)).toEqual([2, 3, 1, 2]);
    expect(await store.get("t", "a")).toMatchObject({ version: 3, data: 3 });
    await expect(
      store.write([
        { op: "put", collection: "t", id: "a", data: 9, expect: 3 },
        { op: "put", collection: "t", id: "a", data: 9, expect: 3 },
      ]),
    ).rejects.toThrow("changed meanwhile");
    expect(await store.get("t", "a")).toMatchObject({ version: 3, data: 3 });
    await store.close();
  });
});

describe("schema migrations", () => {
  test("a state file of the first layout (documents in a WITHOUT ROWID table) opens with every document, version and audit entry kept", async () => {
    const path = join(dir, "first-layout.db");
    const old = new Database(path, { create: true, strict: true });
    old.run("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
    old.run(`CREATE TABLE docs (collection TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL,
      PRIMARY KEY (collection, id)) WITHOUT ROWID;
      CREATE TABLE audit (id TEXT PRIMARY KEY, time TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, entry TEXT NOT NULL) WITHOUT ROWID;
      CREATE INDEX audit_time ON audit (time);`);
    old.run("INSERT INTO schema_migrations VALUES (1, '2026-01-01T00:00:00.000Z')");
    old.run("INSERT INTO docs VALUES ('collectors', 'c1', 3, '{\"name\":\"one\"}', '2026-01-01T00:00:00.000Z')");
    old.run("INSERT INTO docs VALUES ('collectors', 'c2', 1, '{\"name\":\"two\"}', '2026-01-01T00:00:00.000Z')");
    old.run("INSERT INTO docs VALUES ('tokens', 't1', 7, '{\"kind\":\"collector\"}', '2026-01-01T00:00:00.000Z')");
    const entry = { id: "a1", time: "2026-01-01T00:00:00.000Z", actor: "user:a", action: "collector.create", outcome: "success" };
    old.run("INSERT INTO audit VALUES (?, ?, ?, ?, ?)", [entry.id, entry.time, entry.actor, entry.action, JSON.stringify(entry)]);
    old.close();

    const store = new SqliteStore(path);
    try {
      expect((await store.list("collectors")).map((d) => [d.id, d.version, d.data])).toEqual([
        ["c1", 3, { name: "one" }],
        ["c2", 1, { name: "two" }],
      ]);
      expect((await store.get("tokens", "t1"))?.version).toBe(7);
      expect(await store.queryAudit({ limit: 10 })).toEqual([entry as never]);
      // The key is still unique, and a guarded write still sees the kept version.
      await store.write([{ op: "put", collection: "collectors", id: "c1", data: { name: "uno" }, expect: 3 }]);
      expect((await store.get("collectors", "c1"))?.version).toBe(4);
      await expect(store.write([{ op: "put", collection: "collectors", id: "c2", data: {}, expect: "absent" }])).rejects.toThrow();
    } finally {
      await store.close();
    }
    const reopened = new Database(path, { readonly: true });
    expect(reopened.query("SELECT max(version) AS v FROM schema_migrations").get()).toEqual({ v: 2 });
    reopened.close();
  });
});
