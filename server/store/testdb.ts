/**
 * Test support: fresh PostgreSQL databases for one test file's run, at
 * postgres://postgres@127.0.0.1:5432 unless SVC_TEST_POSTGRES_URI says
 * otherwise, under a random name and dropped after. An unreachable server
 * fails the run (it is never skipped): scripts/test.sh starts the local cluster.
 */
import { SQL } from "bun";

export interface TestDatabases {
  /** A connection to the server's `postgres` database, for admin statements. */
  admin: SQL;
  /** This run's random name prefix. */
  run: string;
  uriFor(database: string): string;
  /** Creates `<run>_<suffix>` and answers its URI. */
  create(suffix: string): Promise<string>;
  /** Drops every database this run created and closes the admin connection. */
  dropAll(): Promise<void>;
}

/** Connects (failing with how to start PostgreSQL when it cannot) and answers the run's helper. */
export async function testDatabases(): Promise<TestDatabases> {
  const base = process.env.SVC_TEST_POSTGRES_URI || "postgres://postgres@127.0.0.1:5432";
  const run = `svc_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const uriFor = (database: string) => {
    const url = new URL(base);
    url.pathname = "/" + database;
    return url.toString();
  };
  const admin = new SQL(uriFor("postgres"), { max: 2, connectionTimeout: 5 });
  try {
    await admin`SELECT 1`;
  } catch (error) {
    await admin.close();
    throw new Error(
      `PostgreSQL is not reachable at ${base.replace(/:[^:@/]*@/, ":***@")} (${(error as Error).message}). ` +
        "The PostgreSQL tests need it: start it (as root: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start), " +
        "or point SVC_TEST_POSTGRES_URI at one. CI runs them through scripts/test.sh, which starts it.",
    );
  }
  const created: string[] = [];
  return {
    admin,
    run,
    uriFor,
    async create(suffix) {
      const name = `${run}_${suffix}`;
      await admin.unsafe(`CREATE DATABASE "${name}"`);
      created.push(name);
      return uriFor(name);
    },
    async dropAll() {
      for (const name of created.splice(0)) await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.close();
    },
  };
}

/**
 * Holds `LOCK TABLE docs IN EXCLUSIVE MODE` on the database at `uri` in a
 * connection of its own until `release`: reads go on, every write waits.
 * Resolves once the lock is held; `release` (once or more) ends the transaction and the connection.
 */
export async function holdDocsLock(uri: string): Promise<{ release(): Promise<void> }> {
  const locker = new SQL(uri, { max: 1, connection: { application_name: "svc-test-locker" } });
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const held = locker.begin(async (tx) => {
    await tx`LOCK TABLE docs IN EXCLUSIVE MODE`;
    locked();
    await released;
  });
  try {
    await Promise.race([holding, held]);
  } catch (error) {
    await locker.close();
    throw error;
  }
  let ended: Promise<void> | undefined;
  return {
    release: () =>
      (ended ??= (async () => {
        release();
        await held.catch(() => {});
        await locker.close();
      })()),
  };
}
