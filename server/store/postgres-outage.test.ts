/**
 * The PostgreSQL store while its database is unreachable: a store opened in
 * the background before the database exists, typed 503 errors during an
 * outage, and writes whose COMMIT got no answer (a TCP proxy in the test
 * cuts the connection right at COMMIT) acknowledged exactly when they were
 * committed, and applied once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Socket, TCPSocketListener } from "bun";
import { StorageUnavailableError } from "../errors.ts";
import { PostgresStore } from "./postgres.ts";
import { type TestDatabases, testDatabases } from "./testdb.ts";

let dbs: TestDatabases;

beforeAll(async () => {
  dbs = await testDatabases();
});

afterAll(async () => {
  await dbs?.dropAll();
}, 30_000);

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

async function unavailable(work: Promise<unknown>): Promise<StorageUnavailableError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StorageUnavailableError);
  const failure = error as StorageUnavailableError;
  expect(failure.status).toBe(503);
  expect(failure.code).toBe("storage_unavailable");
  expect(Number(failure.headers["Retry-After"])).toBeGreaterThan(0);
  return failure;
}

/**
 * A loopback TCP proxy to PostgreSQL. `cutAtCommit` arms it for the next
 * client message that carries COMMIT: "before" drops that message and closes
 * both sides (the server never sees COMMIT and rolls back); "after" forwards
 * it and closes only the client side (the server commits, the client never
 * hears so).
 */
interface CommitCutter {
  uri: string;
  cutAtCommit(when: "before" | "after"): void;
  /** How many cuts happened. */
  readonly cuts: number;
  stop(): void;
}

function commitCutter(targetUri: string): CommitCutter {
  const target = new URL(targetUri);
  let armed: "before" | "after" | null = null;
  let cuts = 0;
  interface Pipe {
    upstream: Socket<undefined> | null;
    pending: Uint8Array[];
    cut: boolean;
  }
  const listener: TCPSocketListener<Pipe> = Bun.listen<Pipe>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { upstream: null, pending: [], cut: false };
        void Bun.connect({
          hostname: target.hostname,
          port: Number(target.port || 5432),
          socket: {
            open(upstream) {
              client.data.upstream = upstream;
              for (const chunk of client.data.pending.splice(0)) upstream.write(chunk);
            },
            data(_upstream, chunk) {
              if (!client.data.cut) client.write(chunk);
            },
            close() {
              client.end();
            },
            error() {
              client.end();
            },
          },
        }).catch(() => client.end());
      },
      data(client, chunk) {
        const pipe = client.data;
        if (pipe.cut) return;
        if (armed !== null && Buffer.from(chunk).includes("COMMIT")) {
          const when = armed;
          armed = null;
          cuts++;
          pipe.cut = true;
          if (when === "after") pipe.upstream?.write(chunk);
          else pipe.upstream?.end();
          client.end();
          return;
        }
        if (pipe.upstream) pipe.upstream.write(chunk);
        else pipe.pending.push(new Uint8Array(chunk));
      },
      close(client) {
        // A cut after COMMIT leaves the server side open a moment so the COMMIT is read; it ends when the server answers into nothing.
        if (!client.data.cut) client.data.upstream?.end();
        else setTimeout(() => client.data.upstream?.end(), 200);
      },
    },
  });
  const url = new URL(targetUri);
  url.hostname = "127.0.0.1";
  url.port = String(listener.port);
  return {
    uri: url.toString(),
    cutAtCommit(when) {
      armed = when;
    },
    get cuts() {
      return cuts;
    },
    stop() {
      listener.stop(true);
    },
  };
}

describe("PostgreSQL store outages", () => {
  test("connect: 503 storage_unavailable until the database exists, then it opens (migrated, change feed up)", async () => {
    const name = `${dbs.run}_late`;
    const failures: string[] = [];
    const { store, ready } = PostgresStore.connect(dbs.uriFor(name), {
      backoff: { minMs: 20, maxMs: 100 },
      onRetry: (error) => failures.push(error.message),
    });
    try {
      const early = await unavailable(store.get("t", "a"));
      await unavailable(store.write([{ op: "put", collection: "t", id: "a", data: 1 }]));
      await unavailable(store.ping());
      await until("a failed attempt", () => failures.length > 0);
      expect(failures[0]).toContain("does not exist");
      expect(early.message).toMatch(/not reachable yet/);

      await dbs.create("late");
      await ready;
      const seen: string[] = [];
      store.watch((changes) => seen.push(...changes.map((c) => c.id)));
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      expect((await store.get("t", "a"))!.data).toBe(1);
      expect(seen).toEqual(["a"]);
      await store.ping();
    } finally {
      await store.close();
    }
  }, 30_000);

  test("connect: closing before the database is reachable ends the attempts", async () => {
    const url = new URL(dbs.uriFor("postgres"));
    url.port = "1"; // nothing listens there
    const { store, ready } = PostgresStore.connect(url.toString(), { backoff: { minMs: 20, maxMs: 50 }, connectionTimeout: 2 });
    await unavailable(store.ping());
    await store.close();
    await expect(ready).rejects.toThrow(/closed before it could open/);
  });

  test("while the database refuses connections every operation throws 503 storage_unavailable; afterwards it serves again", async () => {
    const uri = await dbs.create("refuse");
    const name = new URL(uri).pathname.slice(1);
    const store = await PostgresStore.open(uri, { connectionTimeout: 2 });
    try {
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      await dbs.admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await dbs.admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name}`;
      const failure = await unavailable(store.write([{ op: "put", collection: "t", id: "b", data: 2 }]));
      expect(failure.message).not.toContain("postgres://");
      await unavailable(store.get("t", "a"));
      await unavailable(store.list("t"));
      await unavailable(store.ping());
      await dbs.admin.unsafe(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      await until("the store to serve again", () =>
        store.ping().then(
          () => true,
          () => false,
        ),
      );
      // The refused write was not stored; the acknowledged one was.
      expect(await store.get("t", "b")).toBeNull();
      expect((await store.get("t", "a"))!.data).toBe(1);
    } finally {
      await store.close();
    }
  }, 30_000);

  test("a write whose COMMIT got no answer is acknowledged once it is known committed, retried once known aborted, and applied once", async () => {
    const uri = await dbs.create("commit");
    const proxy = commitCutter(uri);
    const store = await PostgresStore.open(proxy.uri, { connectionTimeout: 2 });
    try {
      // The server got COMMIT and committed; the client lost the answer.
      proxy.cutAtCommit("after");
      const [first] = await store.write([{ op: "put", collection: "t", id: "a", data: "once", expect: "absent" }]);
      expect(proxy.cuts).toBe(1);
      expect(first!.version).toBe(1);
      // The server never got COMMIT and rolled back: the write runs again, still guarded.
      proxy.cutAtCommit("before");
      const [second] = await store.write([{ op: "put", collection: "t", id: "a", data: "twice", expect: 1 }]);
      expect(proxy.cuts).toBe(2);
      expect(second!.version).toBe(2);
      const doc = await store.get<string>("t", "a");
      expect(doc!.version).toBe(2);
      expect(doc!.data).toBe("twice");
    } finally {
      await store.close();
      proxy.stop();
    }
  }, 30_000);
});
