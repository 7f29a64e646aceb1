/**
 * The shared Store contract suite. Every adapter's test file calls
 * `storeContract` with a factory that opens a fresh, empty store; `reopen`
 * (where given) opens the same storage again to prove durability.
 */
import { describe, expect, spyOn, test } from "bun:test";
import { ConflictError } from "../errors.ts";
import type { AuditEntry, Change, Store } from "./store.ts";
import { RecordView } from "./view.ts";

export interface ContractTarget {
  open(): Promise<Store>;
  reopen?(previous: Store): Promise<Store>;
  /** Another store instance on the same storage, open at the same time (external stores: another replica). */
  second?(first: Store): Promise<Store>;
}

function auditEntry(time: string, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: Bun.randomUUIDv7("hex", Date.parse(time)),
    time,
    actor: "sa:test",
    action: "collector.create",
    resource: "collector",
    resourceId: "c1",
    outcome: "success",
    details: {},
    remoteAddr: "127.0.0.1",
    ...overrides,
  };
}

export function storeContract(name: string, target: ContractTarget): void {
  describe(`Store contract: ${name}`, () => {
    test("put creates version 1, get reads it back, missing is null", async () => {
      const store = await target.open();
      const [doc] = await store.write([{ op: "put", collection: "things", id: "a", data: { n: 1, s: "x" } }]);
      expect(doc).toMatchObject({ collection: "things", id: "a", version: 1, data: { n: 1, s: "x" } });
      expect(Date.parse(doc!.updatedAt)).not.toBeNaN();
      expect(await store.get("things", "a")).toMatchObject({ version: 1, data: { n: 1, s: "x" } });
      expect(await store.get("things", "missing")).toBeNull();
      expect(await store.get("other", "a")).toBeNull();
      await store.close();
    });

    test("getMany answers the documents that exist, by id, in one call", async () => {
      const store = await target.open();
      const ids = Array.from({ length: 1500 }, (_, i) => `d${i}`);
      await store.write(ids.map((id, i) => ({ op: "put", collection: "many", id, data: { i } })));
      await store.write([{ op: "put", collection: "other", id: "d1", data: "elsewhere" }]);
      const found = await store.getMany<{ i: number }>("many", ["d1", "missing", "d1499", "d1", ...ids.slice(100, 1300)]);
      expect(found.size).toBe(1202);
      expect(found.get("d1")).toMatchObject({ collection: "many", id: "d1", version: 1, data: { i: 1 } });
      expect(found.get("d1499")!.data).toEqual({ i: 1499 });
      expect(found.has("missing")).toBe(false);
      expect((await store.getMany("many", [])).size).toBe(0);
      await store.close();
    });

    test("every put bumps the version; guards are compare-and-swap", async () => {
      const store = await target.open();
      await store.write([{ op: "put", collection: "t", id: "a", data: 1, expect: "absent" }]);
      const [v2] = await store.write([{ op: "put", collection: "t", id: "a", data: 2, expect: 1 }]);
      expect(v2!.version).toBe(2);
      await expect(store.write([{ op: "put", collection: "t", id: "a", data: 3, expect: 1 }])).rejects.toBeInstanceOf(ConflictError);
      // The message may reach an API answer: it names no stored document.
      const conflict = (await store.write([{ op: "put", collection: "t", id: "a", data: 3, expect: "absent" }]).catch((e) => e)) as ConflictError;
      expect(conflict).toBeInstanceOf(ConflictError);
      expect(conflict.code).toBe("version_conflict");
      expect(conflict.message).toMatch(/changed meanwhile/);
      expect(conflict.message).not.toContain("t/a");
      await expect(store.write([{ op: "put", collection: "t", id: "b", data: 3, expect: "present" }])).rejects.toThrow(ConflictError);
      expect((await store.get("t", "a"))!.data).toBe(2);
      const [v3] = await store.write([{ op: "put", collection: "t", id: "a", data: 4, expect: "present" }]);
      expect(v3!.version).toBe(3);
      expect(await store.get("t", "a")).toMatchObject({ version: 3, data: 4 });
      await store.write([{ op: "put", collection: "t", id: "a", data: 2, expect: 3 }]);
      expect(await store.get("t", "b")).toBeNull();
      await store.close();
    });

    test("a batch is all or nothing, audit entries included", async () => {
      const store = await target.open();
      await store.write([{ op: "put", collection: "t", id: "a", data: "old" }]);
      const entry = auditEntry("2026-01-01T00:00:00.000Z");
      await expect(
        store.write(
          [
            { op: "put", collection: "t", id: "a", data: "new" },
            { op: "put", collection: "t", id: "b", data: "new" },
            { op: "delete", collection: "t", id: "zzz", expect: "present" },
          ],
          [entry],
        ),
      ).rejects.toBeInstanceOf(ConflictError);
      expect((await store.get("t", "a"))!.data).toBe("old");
      expect(await store.get("t", "b")).toBeNull();
      expect(await store.queryAudit({ limit: 10 })).toEqual([]);
      await store.close();
    });

    test("delete removes, honours its guard, and is a no-op when absent", async () => {
      const store = await target.open();
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      await expect(store.write([{ op: "delete", collection: "t", id: "a", expect: 7 }])).rejects.toBeInstanceOf(ConflictError);
      await store.write([{ op: "delete", collection: "t", id: "a", expect: 1 }]);
      expect(await store.get("t", "a")).toBeNull();
      await store.write([{ op: "delete", collection: "t", id: "a" }]);
      const [again] = await store.write([{ op: "put", collection: "t", id: "a", data: 2 }]);
      expect(again!.version).toBe(1);
      await store.close();
    });

    test("list is ordered by id, pages with after/limit, filters by prefix, counts", async () => {
      const store = await target.open();
      const ids = ["c/2", "a/1", "b/1", "a/3", "a/2", "ab"];
      await store.write(ids.map((id) => ({ op: "put" as const, collection: "t", id, data: { id } })));
      await store.write([{ op: "put", collection: "other", id: "a/9", data: {} }]);
      expect((await store.list("t")).map((d) => d.id)).toEqual(["a/1", "a/2", "a/3", "ab", "b/1", "c/2"]);
      expect((await store.list("t", { limit: 2 })).map((d) => d.id)).toEqual(["a/1", "a/2"]);
      expect((await store.list("t", { after: "a/2", limit: 2 })).map((d) => d.id)).toEqual(["a/3", "ab"]);
      expect((await store.list("t", { prefix: "a/" })).map((d) => d.id)).toEqual(["a/1", "a/2", "a/3"]);
      expect((await store.list("t", { prefix: "a/", after: "a/1" })).map((d) => d.id)).toEqual(["a/2", "a/3"]);
      expect(await store.count("t")).toBe(6);
      expect(await store.count("none")).toBe(0);
      await store.close();
    });

    test("JSON documents round-trip exactly, unicode and nesting included", async () => {
      const store = await target.open();
      const data = { s: 'näïve ☃ \u0000 "q"', n: -1.5, b: false, z: null, a: [1, { x: [] }], o: { "k.e/y": "v" } };
      await store.write([{ op: "put", collection: "t", id: "ü/☃", data }]);
      expect((await store.get("t", "ü/☃"))!.data).toEqual(data);
      await store.close();
    });

    test("audit entries append with the write and query newest first with filters and a cursor", async () => {
      const store = await target.open();
      const entries = [
        auditEntry("2026-01-01T00:00:00.000Z", { actor: "sa:alice", action: "collector.create" }),
        auditEntry("2026-01-02T00:00:00.000Z", { actor: "sa:bob", action: "collector.delete" }),
        auditEntry("2026-01-03T00:00:00.000Z", { actor: "sa:alice", action: "collector.delete", outcome: "denied" }),
      ];
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }], [entries[0]!]);
      await store.write([], [entries[1]!, entries[2]!]);
      expect(await store.queryAudit({ limit: 10 })).toEqual([entries[2]!, entries[1]!, entries[0]!]);
      expect(await store.queryAudit({ limit: 10, actor: "sa:alice" })).toEqual([entries[2]!, entries[0]!]);
      expect(await store.queryAudit({ limit: 10, action: "collector.delete" })).toEqual([entries[2]!, entries[1]!]);
      expect(await store.queryAudit({ limit: 10, from: "2026-01-02T00:00:00.000Z", to: "2026-01-03T00:00:00.000Z" })).toEqual([entries[1]!]);
      const page1 = await store.queryAudit({ limit: 2 });
      const page2 = await store.queryAudit({ limit: 2, before: page1[1]!.id });
      expect(page2).toEqual([entries[0]!]);
      await store.close();
    });

    test("pruneAudit deletes entries older than the cut-off only", async () => {
      const store = await target.open();
      const old = auditEntry("2025-01-01T00:00:00.000Z");
      const recent = auditEntry("2026-06-01T00:00:00.000Z");
      await store.write([], [old, recent]);
      expect(await store.pruneAudit("2026-01-01T00:00:00.000Z")).toBe(1);
      expect(await store.queryAudit({ limit: 10 })).toEqual([recent]);
      await store.close();
    });

    test("watch reports committed changes, not failed ones, until unsubscribed", async () => {
      const store = await target.open();
      const seen: Change[] = [];
      const stop = store.watch((changes) => seen.push(...changes));
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      await store.write([{ op: "put", collection: "t", id: "a", data: 2, expect: 99 }]).catch(() => {});
      await store.write([{ op: "delete", collection: "t", id: "a" }]);
      await Bun.sleep(50);
      expect(seen).toEqual([
        { collection: "t", id: "a", version: 1, op: "put", data: 1 },
        { collection: "t", id: "a", version: 0, op: "delete" },
      ]);
      stop();
      await store.write([{ op: "put", collection: "t", id: "b", data: 1 }]);
      await Bun.sleep(50);
      expect(seen).toHaveLength(2);
      await store.close();
    });

    test("a put this store wrote reaches its watchers with the document written, each version its own", async () => {
      const store = await target.open();
      const seen: Change[] = [];
      const stop = store.watch((changes) => seen.push(...changes));
      const first = { n: 1, nested: { s: "x" } };
      const second = { n: 2 };
      await store.write([{ op: "put", collection: "t", id: "a", data: { n: 0 } }]);
      await store.write([
        { op: "put", collection: "t", id: "a", data: first },
        { op: "put", collection: "t", id: "b", data: "b" },
        { op: "put", collection: "t", id: "a", data: second },
        { op: "delete", collection: "t", id: "b" },
      ]);
      await Bun.sleep(50);
      expect(seen.map((c) => [c.id, c.version, c.op, c.data])).toEqual([
        ["a", 1, "put", { n: 0 }],
        ["a", 2, "put", first],
        ["b", 1, "put", "b"],
        ["a", 3, "put", second],
        ["b", 0, "delete", undefined],
      ]);
      // The very object written (Change.data: shared, never copied, never mutated).
      expect(seen[1]!.data).toBe(first);
      expect(seen[3]!.data).toBe(second);
      stop();
      await store.close();
    });

    test("a view holds this store's writes once they are acknowledged, from the feed, without reading them back", async () => {
      const store = await target.open();
      const view = new RecordView<{ n: number }>(store, "viewed");
      await view.ready();
      const reads = [spyOn(store, "get"), spyOn(store, "getMany"), spyOn(store, "list")];
      await store.write([{ op: "put", collection: "viewed", id: "a", data: { n: 1 } }]);
      await store.write([{ op: "put", collection: "viewed", id: "a", data: { n: 2 } }]);
      expect(view.get("a")).toEqual({ n: 2 });
      expect(reads.map((read) => read.mock.calls.length)).toEqual([0, 0, 0]);
      view.close();
      await store.close();
    });

    test("collections lists what holds documents; restore keeps versions and times exactly, all or nothing, silently", async () => {
      const store = await target.open();
      expect(await store.collections()).toEqual([]);
      const seen: Change[] = [];
      const stop = store.watch((changes) => seen.push(...changes));
      const docs = [
        { collection: "b", id: "x", version: 7, data: { deep: [1, { s: "\u00e9" }] }, updatedAt: "2026-01-02T03:04:05.678Z" },
        { collection: "a", id: "y", version: 1, data: "text", updatedAt: "2026-01-02T03:04:05.000Z" },
      ];
      const entry = auditEntry("2026-01-02T03:04:05.000Z", { action: "config.commit" });
      await store.restore(docs, [entry]);
      expect(await store.collections()).toEqual(["a", "b"]);
      expect(await store.get("b", "x")).toEqual(docs[0]!);
      expect(await store.get("a", "y")).toEqual(docs[1]!);
      expect(await store.queryAudit({ limit: 10 })).toEqual([entry]);
      // An existing document or audit id refuses the whole batch.
      const fresh = { collection: "c", id: "new", version: 1, data: 1, updatedAt: "2026-01-02T03:04:05.000Z" };
      await expect(store.restore([fresh, docs[1]!], [])).rejects.toMatchObject({ code: "restore_conflict" });
      await expect(store.restore([fresh], [entry])).rejects.toMatchObject({ code: "restore_conflict" });
      expect(await store.get("c", "new")).toBeNull();
      // The next put continues from the restored version.
      const [next] = await store.write([{ op: "put", collection: "b", id: "x", data: 8, expect: 7 }]);
      expect(next!.version).toBe(8);
      await Bun.sleep(50);
      expect(seen.filter((c) => c.collection !== "b")).toEqual([]);
      stop();
      await store.close();
    });

    test("ping answers while open and fails after close", async () => {
      const store = await target.open();
      await store.ping();
      await store.close();
      await expect(store.ping()).rejects.toThrow();
    });

    if (target.second) {
      const second = target.second;
      test("compare-and-swap holds across two instances writing at once", async () => {
        const a = await target.open();
        const b = await second(a);
        for (let round = 0; round < 5; round++) {
          const id = `race${round}`;
          const created = await Promise.allSettled([
            a.write([{ op: "put", collection: "t", id, data: "a", expect: "absent" }]),
            b.write([{ op: "put", collection: "t", id, data: "b", expect: "absent" }]),
          ]);
          expect(created.filter((r) => r.status === "fulfilled")).toHaveLength(1);
          const lost = created.find((r) => r.status === "rejected") as PromiseRejectedResult;
          expect(lost.reason).toBeInstanceOf(ConflictError);
          const updated = await Promise.allSettled([
            a.write([{ op: "put", collection: "t", id, data: "a2", expect: 1 }]),
            b.write([{ op: "put", collection: "t", id, data: "b2", expect: 1 }]),
          ]);
          expect(updated.filter((r) => r.status === "fulfilled")).toHaveLength(1);
          expect((await b.get("t", id))!.version).toBe(2);
        }
        // Unconditional puts from both never reuse a version.
        const puts = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).write([{ op: "put", collection: "t", id: "n", data: i }])));
        expect(puts.map(([d]) => d!.version).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        await a.close();
        await b.close();
      });

      test("after sync, the watchers and a view have every write another instance acknowledged before it", async () => {
        const a = await target.open();
        const b = await second(a);
        const view = new RecordView<{ id: string }>(a, "synced");
        await view.ready();
        const heard = new Set<string>();
        a.watch((changes) => {
          for (const change of changes) heard.add(change.id);
        });
        for (let round = 0; round < 5; round++) {
          const ids = Array.from({ length: 10 }, (_, i) => `r${round}-${i}`);
          await Promise.all(ids.map((id) => b.write([{ op: "put", collection: "synced", id, data: { id } }])));
          await a.sync();
          expect(ids.filter((id) => !heard.has(id))).toEqual([]);
          await view.current();
          expect(ids.filter((id) => view.get(id) === undefined)).toEqual([]);
        }
        view.close();
        await a.close();
        await b.close();
      });

      test("the change feed reaches every instance, each change once", async () => {
        const a = await target.open();
        const b = await second(a);
        const seenA: Change[] = [];
        const seenB: Change[] = [];
        a.watch((changes) => seenA.push(...changes));
        b.watch((changes) => seenB.push(...changes));
        await a.write([{ op: "put", collection: "t", id: "x", data: 1 }]);
        await b.write([
          { op: "put", collection: "t", id: "x", data: 2 },
          { op: "put", collection: "t", id: "y", data: 1 },
        ]);
        await a.write([{ op: "delete", collection: "t", id: "y" }]);
        const expected: Omit<Change, "data">[] = [
          { collection: "t", id: "x", version: 1, op: "put" },
          { collection: "t", id: "x", version: 2, op: "put" },
          { collection: "t", id: "y", version: 1, op: "put" },
          { collection: "t", id: "y", version: 0, op: "delete" },
        ];
        for (let i = 0; i < 100 && (seenA.length < 4 || seenB.length < 4); i++) await Bun.sleep(20);
        await Bun.sleep(50);
        const announced = (seen: Change[]) => seen.map(({ data: _, ...change }) => change);
        expect(announced(seenA)).toEqual(expected);
        expect(announced(seenB)).toEqual(expected);
        // Each instance's own puts carry their documents; the other's do not (its watchers read them if they need them).
        expect(seenA.map((c) => c.data)).toEqual([1, undefined, undefined, undefined]);
        expect(seenB.map((c) => c.data)).toEqual([undefined, 2, 1, undefined]);
        await a.close();
        await b.close();
      });
    }

    if (target.reopen) {
      const reopen = target.reopen;
      test("what was written is there after reopening", async () => {
        const store = await target.open();
        await store.write([{ op: "put", collection: "t", id: "a", data: { kept: true } }], [auditEntry("2026-01-01T00:00:00.000Z")]);
        await store.close();
        const again = await reopen(store);
        expect((await again.get("t", "a"))!.data).toEqual({ kept: true });
        expect(await again.queryAudit({ limit: 10 })).toHaveLength(1);
        await again.close();
      });
    }
  });
}
