/**
 * kill -9 loop on the embedded store: the real server is killed with SIGKILL
 * at a random moment 50 times, on the same state file, while a client loops
 * edit + commit, publish and collector token rotation. Between runs (server
 * dead) and after each restart:
 * - history intact: `git fsck --strict` on the bare repository beside the
 *   state file is clean; /commits is one chain (each item's parent is the
 *   next item) ending at the branch head; every acknowledged commit is in it;
 * - no half-rotated token: each collector has exactly one live collector
 *   token, in the state file: one `tokens` record of kind collector for it,
 *   and it is the digest `collector_tokens/<id>` names. That token is the
 *   last one the client was answered, or (only when a rotation was in flight
 *   at the kill) the one that rotation minted, which the client never saw.
 *   Over the API the last answered token works and every earlier one is
 *   refused, unless that in-flight rotation won, in which case all the
 *   client's tokens are refused and one rotation gives it a working token;
 * - rollout resumes: /publish/status answers a rollout of an existing commit,
 *   and after the storm a commit and publish target every collector with the
 *   head commit, served to it over remote config.
 * Each round waits for the client's first answer and then kills within
 * 300 ms, so every kill lands inside the loop. Most of a round is the
 * restart; the test's own CPU is about 70 s, the timeout leaves room for a
 * shared, busy runner.
 */
import { Database } from "bun:sqlite";
import { afterAll, afterEach, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { deploymentKit } from "../deployment.ts";
import { within } from "../opamp/helpers.ts";
import { api, bootstrapToken, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

const ROUNDS = 50;
/** A round restarts the server, works, kills it and checks what is on disk: seconds on a busy machine. The test's limit is proportional. */
const ROUND_LIMIT_MS = 20_000;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

async function git(gitdir: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(["git", "--git-dir", gitdir, ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out: out + err };
}

/** Per collector, what the client knows about its token. */
interface TokenState {
  /** The last token a rotation answered. */
  acked: string;
  /** Every token answered before it, each rotated away. */
  retired: string[];
  /** A rotation was sent and not answered when the server died. */
  inFlight: boolean;
}

/** The live collector tokens of one collector, read from the state file while the server is down. */
function storedTokens(statePath: string, collectorId: string): { current: string | null; live: string[] } {
  const db = new Database(statePath);
  try {
    const current = db.query("SELECT data FROM docs WHERE collection = 'collector_tokens' AND id = ?").get(collectorId) as { data: string } | null;
    const live = db
      .query("SELECT id FROM docs WHERE collection = 'tokens' AND json_extract(data, '$.kind') = 'collector' AND json_extract(data, '$.subjectId') = ?")
      .all(collectorId) as { id: string }[];
    return { current: current ? (JSON.parse(current.data) as { digest: string }).digest : null, live: live.map((r) => r.id) };
  } finally {
    db.close();
  }
}

test(
  `${ROUNDS} kills -9 during commit, publish and token rotation: history intact, no half-rotated token, rollout resumes`,
  async () => {
    const dir = tempDir("svc-kill9-");
    const statePath = join(dir, "state.db");
    const gitdir = join(dir, "config.git");
    const admin = bootstrapToken();
    const env = { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_LOGGING_LEVEL: "warn" };
    const start = () => startServer({ statePath, env });

    // Two Runtime R collectors routed through one pipeline, committed, published, each with a token.
    let server: ServerProcess = await start();
    const call = async <T = Record<string, unknown>>(path: string, method = "GET", json?: unknown): Promise<T> => {
      const res = await api(server.base, admin, path, { method, json });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
      return (text === "" ? undefined : JSON.parse(text)) as T;
    };
    const routeThrough = await deploymentKit(call);
    const collectors: string[] = [];
    for (const name of ["alloy-a", "alloy-b"]) {
      const { id } = await call<{ id: string }>("/collectors", "POST", { name, managementMode: "rcfg-remotecfg" });
      await routeThrough(id);
      collectors.push(id);
    }
    const acknowledged: string[] = [(await call<{ commit: string }>("/commit", "POST", { message: "base" })).commit];
    await call("/publish", "POST");
    const tokens = new Map<string, TokenState>();
    for (const id of collectors)
      tokens.set(id, { acked: (await call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token, retired: [], inFlight: false });
    const sourceId = (await call<{ items: { sourceId: string }[] }>(`/collectors/${collectors[0]}/sources`)).items[0]!.sourceId;

    const getConfig = (token: string, id: string) =>
      fetch(`${server.base}/collector.v1.CollectorService/GetConfig`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
        body: JSON.stringify({ id }),
      });

    let kills = 0;
    const ops = { commits: 0, publishes: 0, rotations: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      // The client loop: edit + commit, publish, rotate a token; whatever was answered is acknowledged.
      let stop = false;
      let acked!: () => void;
      const firstAck = new Promise<void>((resolve) => (acked = resolve));
      const base = server.base;
      const worker = (async () => {
        for (let i = 0; !stop; i++) {
          const collectorId = collectors[i % collectors.length]!;
          try {
            switch (i % 3) {
              case 0: {
                const edit = await api(base, admin, `/collectors/${collectorId}/sources`, {
                  method: "POST",
                  json: { sourceId, configOverrides: { include: [`/var/log/r${round}-${i}/*.log`] } },
                });
                if (edit.status >= 300) break;
                const res = await api(base, admin, "/commit", { method: "POST", json: { message: `round ${round} op ${i}` } });
                if (res.status === 201) {
                  acknowledged.push(((await res.json()) as { commit: string }).commit);
                  ops.commits++;
                }
                break;
              }
              case 1: {
                const res = await api(base, admin, "/publish", { method: "POST" });
                if (res.status === 202) ops.publishes++;
                break;
              }
              case 2: {
                const state = tokens.get(collectorId)!;
                state.inFlight = true;
                const res = await api(base, admin, `/collectors/${collectorId}/otlp-token`, { method: "POST" });
                if (res.status === 201) {
                  const { token } = (await res.json()) as { token: string };
                  state.retired.push(state.acked);
                  state.acked = token;
                  ops.rotations++;
                }
                state.inFlight = false;
                break;
              }
            }
            acked();
          } catch {
            return; // the server died under us; an in-flight rotation stays marked
          }
        }
      })();
      // Some work first, so that every kill lands inside the loop, at a random point of it.
      await within(firstAck, 30_000, `an acknowledged write in round ${round}`);
      await Bun.sleep(Math.random() * 300);
      server.proc.kill("SIGKILL");
      await server.exited;
      kills++;
      stop = true;
      await worker;

      // Server down: the repository and the token records as the kill left them.
      expect(await git(gitdir, "fsck", "--strict", "--no-dangling")).toEqual({ code: 0, out: "" });
      const head = (await git(gitdir, "rev-parse", "--verify", "main^{commit}")).out.trim();
      const lost: string[] = [];
      for (const [id, state] of tokens) {
        const { current, live } = storedTokens(statePath, id);
        expect({ id, live: live.length, currentIsLive: current !== null && live[0] === current }).toEqual({ id, live: 1, currentIsLive: true });
        if (current !== sha256(state.acked)) {
          expect({ id, inFlight: state.inFlight }).toEqual({ id, inFlight: true });
          lost.push(id);
        }
      }

      server = await start();
      const [commits, status] = await Promise.all([
        call<{ items: { commit: string; parent: string | null }[] }>("/commits?limit=1000"),
        call<{ commit: string | null; state: string }>("/publish/status"),
      ]);
      // History: one chain from the head, holding every acknowledged commit.
      const history = commits.items;
      expect(history[0]!.commit).toBe(head);
      for (let i = 0; i < history.length; i++) expect(history[i]!.parent).toBe(history[i + 1]?.commit ?? null);
      const inHistory = new Set(history.map((c) => c.commit));
      expect(acknowledged.filter((c) => !inHistory.has(c))).toEqual([]);
      // Tokens: the last answered one works and every earlier one is refused; a lost rotation is redone.
      await Promise.all(
        [...tokens].map(async ([id, state]) => {
          const refused = await Promise.all(state.retired.slice(-2).map(async (old) => (await getConfig(old, id)).status));
          // The server's log rides along when a code is wrong: a 500 is explained there.
          const wrong = refused.filter((code) => code !== 401);
          expect({ wrong, log: wrong.length > 0 ? server.stdout() + server.stderr() : "" }).toEqual({ wrong: [], log: "" });
          if (lost.includes(id)) {
            expect((await getConfig(state.acked, id)).status).toBe(401);
            state.retired.push(state.acked);
            state.acked = (await call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
          }
          expect((await getConfig(state.acked, id)).status).toBe(200);
          state.inFlight = false;
        }),
      );
      // Rollout: the latest rollout is of a commit in the history.
      expect(status.commit === null || inHistory.has(status.commit)).toBe(true);
    }

    // After the storm: a commit and a publish reach both collectors.
    for (const id of collectors) await call(`/collectors/${id}/sources`, "POST", { sourceId, configOverrides: { include: ["/var/log/final/*.log"] } });
    const last = (await call<{ commit: string }>("/commit", "POST", { message: "after the storm" })).commit;
    await call("/publish", "POST");
    const status = await call<{ commit: string; state: string; total: number }>("/publish/status");
    expect(status.commit).toBe(last);
    expect(status.total).toBe(collectors.length);
    for (const id of collectors) {
      const history = await call<{ items: { commit: string }[] }>(`/collectors/${id}/config-history`);
      expect(history.items.at(-1)!.commit).toBe(last);
    }
    for (const id of collectors) {
      const served = (await (await getConfig(tokens.get(id)!.acked, id)).json()) as { content: string };
      expect(served.content).toContain("/var/log/final/*.log");
    }
    await server.stop("SIGTERM");

    expect(kills).toBe(ROUNDS);
    // The kills landed while work was going on, not only between operations.
    expect(ops.commits + ops.publishes + ops.rotations).toBeGreaterThanOrEqual(ROUNDS);
    expect(Math.min(ops.commits, ops.publishes, ops.rotations)).toBeGreaterThan(ROUNDS / 10);
    console.log(`kill -9 loop: ${kills} kills, ${ops.commits} commits, ${ops.publishes} publishes, ${ops.rotations} rotations acknowledged`);
  },
  ROUNDS * ROUND_LIMIT_MS,
);
