/**
 * A fleet publish killed with SIGKILL at every slice boundary, on the embedded
 * store and on PostgreSQL (issue 34, "a publish is atomic to the reader").
 * The fleet (Runtime R collectors, each with its own config) was published
 * once by the real server and every collector applied it; then a commit
 * changes every collector's config. For each crash point k, on a fresh copy
 * of that state, publish-crash-child.ts publishes it with small slices and
 * kills itself after k slices landed. Then:
 * - on the state as the kill left it (no server running): nothing of the
 *   publish is visible (k = 0), or its rollout is the latest, names every
 *   collector whose target moved, each of those targets names it, and its
 *   marker says exactly how many were written;
 * - the real server restarted on that state records the publish interrupted
 *   with exactly those collectors (rollout, status and one `config.publish`
 *   audit entry with outcome failure), while the earlier rollout's status
 *   leaves them out (handed on) and is not `running`;
 * - the next publish over the API counts every collector it and the
 *   interrupted one moved (`changed`, `resumes`, its audit entry), every
 *   collector ends on the new commit, and neither earlier rollout is `running`.
 * A staged publish is crashed the same way on the embedded store: its queued
 * targets written before the crash are removed, never released.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { RemoteConfigStatuses } from "../../server/gen/collector/v1/collector_pb.ts";
import { CONFIGS, LATEST, PENDING, ROLLOUTS, WRITES, type CollectorConfig, type Rollout, type RolloutWrite } from "../../server/rollout/records.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { SqliteStore } from "../../server/store/sqlite.ts";
import type { Store } from "../../server/store/store.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { jsonCaller } from "../client.ts";
import { deploymentKit } from "../deployment.ts";
import { until } from "../opamp/helpers.ts";
import { BUN, bootstrapToken, killAll, REPO, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";

const ADMIN = bootstrapToken();
const COLLECTORS = 8;
/** Store operations per slice: 8 rendered configs and 8 × 2 target writes make 4 slices, the first without a target. */
const SLICE = 6;
const CHILD = join(REPO, "test/faults/publish-crash-child.ts");
/** Waits for the restarted server to record the interruption; on PostgreSQL the dead writer's lease (10 s + 2 s margin) expires first. */
const RECOVERY_WAIT_MS = 60_000;

let pg: TestDatabases | undefined;
afterAll(async () => {
  await killAll();
  removeTempDirs();
  await pg?.dropAll();
});

/** Where one copy of the server's state lives, and how to reach it. */
interface State {
  env: Record<string, string>;
  /** The state as a Store, opened in this process while no server runs. */
  open(): Promise<Store>;
}

interface Backend {
  name: string;
  fresh(): Promise<State>;
  /** A copy of `state` (no server running on it). */
  copy(state: State, label: string): Promise<State>;
}

function embedded(): Backend {
  const at = (dir: string): State => ({
    env: { SVC_STORAGE_BOLTPATH: join(dir, "state.db") },
    open: async () => new SqliteStore(join(dir, "state.db")),
  });
  const dirs = new Map<State, string>();
  const make = (dir: string) => {
    const state = at(dir);
    dirs.set(state, dir);
    return state;
  };
  return {
    name: "embedded",
    fresh: async () => make(tempDir("svc-publish-crash-")),
    async copy(state) {
      const dir = tempDir("svc-publish-crash-");
      cpSync(dirs.get(state)!, dir, { recursive: true });
      return make(dir);
    },
  };
}

function postgres(): Backend {
  const key = randomBytes(32).toString("base64");
  const names = new Map<State, string>();
  const at = (name: string, uri: string): State => {
    const state: State = {
      env: { SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: uri, SVC_SECRETS_KEY: key, SVC_STORAGE_BOLTPATH: join(tempDir(), "state.db") },
      open: () => PostgresStore.open(uri),
    };
    names.set(state, name);
    return state;
  };
  return {
    name: "PostgreSQL",
    async fresh() {
      pg ??= await testDatabases();
      return at(`${pg.run}_base`, await pg.create("base"));
    },
    async copy(state, label) {
      // CREATE DATABASE ... TEMPLATE copies it whole; nothing may be connected to the template meanwhile.
      const name = `${pg!.run}_${label}`;
      await pg!.admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${names.get(state)!}"`);
      return at(name, pg!.uriFor(name));
    },
  };
}

const start = (state: State): Promise<ServerProcess> => startServer({ env: { ...state.env, SVC_BOOTSTRAP_ADMINTOKEN: ADMIN, SVC_LOGGING_LEVEL: "warn" } });

interface Fleet {
  state: State;
  collectors: string[];
  tokens: Map<string, string>;
  /** The first publish, which every collector applied. */
  first: string;
  /** The commit every collector's config changes to. */
  next: string;
}

/** Each collector asks for its config and reports it applied (remote config), so its target turns current. */
async function applyAll(server: ServerProcess, fleet: Pick<Fleet, "collectors" | "tokens">): Promise<void> {
  for (const id of fleet.collectors) {
    const client = remoteConfigClient(server.base, fleet.tokens.get(id)!);
    const { hash } = await client.getConfig({ id });
    await client.getConfig({ id, hash, remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_APPLIED } });
  }
}

/** The fleet published and applied, then a commit that changes every collector's config; the server stopped. */
async function fleetFor(backend: Backend): Promise<Fleet> {
  const state = await backend.fresh();
  const server = await start(state);
  const call = jsonCaller(server.base, ADMIN);
  const routeThrough = await deploymentKit(call);
  const collectors: string[] = [];
  const tokens = new Map<string, string>();
  for (let i = 0; i < COLLECTORS; i++) {
    const { id } = await call<{ id: string }>("/collectors", "POST", { name: `alloy-${i}`, managementMode: "rcfg-remotecfg" });
    // Each its own path: its own rendered config.
    await routeThrough(id, `/var/log/app-${i}/*.log`);
    tokens.set(id, (await call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token);
    collectors.push(id);
  }
  await call("/commit", "POST", { message: "first" });
  const first = (await call<Rollout>("/publish", "POST")).id;
  await applyAll(server, { collectors, tokens });
  await until(async () => (await call<{ state: string }>(`/rollouts/${first}`)).state === "completed", 15_000, 50, "the first publish to be applied");
  const [destination] = (await call<{ items: { id: string; name: string; type: string }[] }>("/destinations")).items;
  await call(`/destinations/${destination!.id}`, "PUT", {
    name: destination!.name,
    type: destination!.type,
    config: { endpoint: "https://otlp-next.example.com" },
  });
  const next = (await call<{ commit: string }>("/commit", "POST", { message: "new endpoint" })).commit;
  expect(await server.stop("SIGTERM")).toBe(0);
  return { state, collectors: collectors.sort(), tokens, first, next };
}

/** Runs the child on `state`: how many slices it wrote before it died, or that it finished. */
async function crash(state: State, after: number, strategy?: unknown): Promise<{ slices: number; finished: boolean }> {
  const proc = Bun.spawn([BUN, CHILD], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      ...state.env,
      PUBLISH_WRITE_SLICE: String(SLICE),
      PUBLISH_CRASH_AFTER: String(after),
      ...(strategy ? { PUBLISH_STRATEGY: JSON.stringify(strategy) } : {}),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const finished = /^published \S+$/m.test(out);
  // Killed by its own SIGKILL, or finished: anything else is the child failing.
  if (!(finished ? code === 0 : proc.signalCode === "SIGKILL")) throw new Error(`the publishing child ended with ${code} ${proc.signalCode}\n${out}\n${err}`);
  return { slices: out.match(/^slice \d+$/gm)?.length ?? 0, finished };
}

/** What the kill left, read from the store with no server running. */
async function leftover(state: State, fleet: Fleet) {
  const store = await state.open();
  try {
    const targets = (await store.list<CollectorConfig>(CONFIGS)).map((d) => d.data);
    const rollouts = (await store.list<Rollout>(ROLLOUTS)).map((d) => d.data);
    const markers = (await store.list<RolloutWrite>(WRITES)).map((d) => d.data);
    const latest = (await store.get<{ rolloutId: string }>(LATEST.collection, LATEST.id))?.data.rolloutId;
    const pending = (await store.list(PENDING)).map((d) => d.id);
    return {
      moved: targets.filter((t) => t.targetCommit === fleet.next),
      later: rollouts.filter((r) => r.id > fleet.first),
      markers,
      latest,
      pending,
    };
  } finally {
    await store.close();
  }
}

interface Status {
  rolloutId: string | null;
  state: string;
  total: number;
  handedOn?: number;
  interrupted?: { planned: number; written: number };
  collectors: { id: string; state: string }[];
}

interface AuditItem {
  resourceId: string | null;
  outcome: string;
  details: { changed: number; collectors: number; interrupted?: { planned: number; written: number }; resumes?: { rolloutId: string; collectors: number }[] };
}

/** One crash point: crash after `k` slices, check the state as left, restart, check recovery and the next publish. Answers whether the child finished. */
async function crashPoint(backend: Backend, fleet: Fleet, k: number, strategy?: { batchSize: number }): Promise<boolean> {
  const state = await backend.copy(fleet.state, `k${k}${strategy ? "s" : ""}`);
  const { slices, finished } = await crash(state, k, strategy);
  if (finished) return true;
  expect(slices).toBe(k);

  // As the kill left it: nothing visible, or the latest rollout naming exactly what was written.
  const left = await leftover(state, fleet);
  const planned = COLLECTORS;
  /** Only the first batch's are targets; a staged publish queues the rest. */
  const firstBatch = strategy ? strategy.batchSize : COLLECTORS;
  let interrupted: Rollout | undefined;
  if (k === 0) {
    expect({ moved: left.moved.length, later: left.later.length, markers: left.markers.length, latest: left.latest }).toEqual({
      moved: 0,
      later: 0,
      markers: 0,
      latest: fleet.first,
    });
  } else {
    expect(left.later.length).toBe(1);
    interrupted = left.later[0]!;
    expect(left.latest).toBe(interrupted.id);
    expect(left.markers.map((m) => m.rolloutId)).toEqual([interrupted.id]);
    const { written } = left.markers[0]!;
    expect(left.moved.map((t) => t.collectorId).sort()).toEqual(interrupted.changed.slice(0, Math.min(written, firstBatch)).sort());
    for (const target of left.moved) expect(target.rolloutId).toBe(interrupted.id);
    const queued = interrupted.changed.slice(firstBatch, Math.max(firstBatch, written)).map((c) => `${interrupted!.id}/${c}`);
    expect(left.pending.sort()).toEqual(queued.sort());
  }
  const moved = left.moved.map((t) => t.collectorId).sort();

  // Restarted: the interruption is recorded with exactly what was written.
  const server = await start(state);
  const call = jsonCaller(server.base, ADMIN);
  if (interrupted) {
    const id = interrupted.id;
    const status = await until(
      async () => {
        const s = await call<Status>(`/rollouts/${id}`);
        return s.interrupted ? s : null;
      },
      RECOVERY_WAIT_MS,
      100,
      `rollout ${id} to be recorded interrupted`,
    );
    expect(status.interrupted).toEqual({ planned, written: moved.length, at: expect.any(String) } as unknown as Status["interrupted"]);
    expect(status.collectors.map((c) => c.id).sort()).toEqual(moved);
    expect((await call<Status>("/publish/status")).rolloutId).toBe(id);
    const audit = (await call<{ items: AuditItem[] }>("/audit?action=config.publish&limit=100")).items.filter((e) => e.resourceId === id);
    expect(audit.map((e) => ({ outcome: e.outcome, changed: e.details.changed, interrupted: e.details.interrupted }))).toEqual([
      {
        outcome: "failure",
        changed: moved.length,
        interrupted: { planned, written: moved.length, at: expect.any(String) } as unknown as AuditItem["details"]["interrupted"],
      },
    ]);
  }
  // The publish before it: what was moved is handed on, the rest applied it; it is not running.
  const before = await call<Status>(`/rollouts/${fleet.first}`);
  expect({ state: before.state, total: before.total, handedOn: before.handedOn ?? 0 }).toEqual({
    state: "completed",
    total: COLLECTORS - moved.length,
    handedOn: moved.length,
  });

  // The next publish counts every collector moved since the first, the interrupted publish's included.
  const next = await call<Rollout>("/publish", "POST");
  expect(next.changed.length).toBe(COLLECTORS);
  expect(next.resumes ?? []).toEqual(moved.length > 0 ? [{ rolloutId: interrupted!.id, collectors: moved.length }] : []);
  const entry = (await call<{ items: AuditItem[] }>("/audit?action=config.publish&limit=100")).items.find((e) => e.resourceId === next.id)!;
  expect({ outcome: entry.outcome, changed: entry.details.changed, resumes: entry.details.resumes ?? [] }).toEqual({
    outcome: "success",
    changed: COLLECTORS,
    resumes: next.resumes ?? [],
  });
  await applyAll(server, fleet);
  await until(async () => (await call<Status>(`/rollouts/${next.id}`)).state === "completed", 15_000, 50, "the next publish to be applied");
  for (const id of [fleet.first, ...(interrupted ? [interrupted.id] : [])]) expect((await call<Status>(`/rollouts/${id}`)).state).not.toBe("running");
  if (interrupted) {
    // Its end is recorded with what it kept: every collector it wrote went on to the next publish.
    const id = interrupted.id;
    const ended = await until(
      async () => (await call<{ items: Rollout[] }>("/rollouts?limit=10")).items.find((r) => r.id === id)?.ended,
      15_000,
      50,
      `the end of rollout ${id}`,
    );
    expect({ outcome: ended.outcome, handedOn: ended.handedOn ?? 0, current: ended.counts.current }).toEqual({
      outcome: "completed",
      handedOn: moved.length,
      current: 0,
    });
  }
  expect(await server.stop("SIGTERM")).toBe(0);

  // Every collector is on the new commit, and nothing is left being written or queued.
  const after = await leftover(state, fleet);
  expect({ moved: after.moved.length, markers: after.markers, pending: after.pending }).toEqual({ moved: COLLECTORS, markers: [], pending: [] });
  return false;
}

for (const backend of [embedded(), postgres()]) {
  describe(backend.name, () => {
    test(`a fleet publish killed at each slice boundary: nothing visible or a rollout naming every target written; recorded interrupted after restart; the next publish counts all`, async () => {
      const fleet = await fleetFor(backend);
      let k = 0;
      while (!(await crashPoint(backend, fleet, k))) k++;
      // 8 rendered configs and 16 target writes in slices of 6 operations: 4 slices, so kills after 0 to 3 of them.
      expect(k).toBe(4);
    }, 600_000);
  });
}

describe("embedded, staged", () => {
  test("a staged publish killed at each slice boundary keeps only first-batch targets written; its queued targets are removed, never released", async () => {
    const backend = embedded();
    const fleet = await fleetFor(backend);
    let k = 0;
    while (!(await crashPoint(backend, fleet, k, { batchSize: 3 }))) k++;
    expect(k).toBeGreaterThanOrEqual(3);
  }, 600_000);
});
