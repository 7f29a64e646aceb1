/**
 * Two server processes on one PostgreSQL database, as a load balancer would
 * run them. OpAMP clients (real protobuf over WebSocket) are spread over both
 * and know both URLs: one publish on replica A reaches the clients of B
 * through the change feed, and both replicas report the same rollout; after
 * kill -9 of A its clients reconnect to B, stay current and take B's next
 * publish; a commit made on B is the head of history on a restarted A.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { AgentToServerSchema, ServerToAgentSchema, type ServerToAgent } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { deploymentKit } from "../deployment.ts";
import { applied, CAPS, description, until, uuidBytes, within } from "../opamp/helpers.ts";
import { jsonCaller } from "../client.ts";
import { bootstrapToken, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";

const ADMIN = bootstrapToken();
/** The secrets key every replica shares (storage.backend external requires one). */
const SECRETS_KEY = randomBytes(32).toString("base64");
let pg: TestDatabases;
let uri: string;

beforeAll(async () => {
  pg = await testDatabases();
  uri = await pg.create("replicas");
});
afterAll(async () => {
  await killAll();
  removeTempDirs();
  await pg?.dropAll();
});

function replica(port?: number): Promise<ServerProcess> {
  return startServer({
    port,
    statePath: `${tempDir()}/state.db`,
    env: {
      SVC_STORAGE_BACKEND: "external",
      SVC_DATABASE_URI: uri,
      SVC_SECRETS_KEY: SECRETS_KEY,
      SVC_BOOTSTRAP_ADMINTOKEN: ADMIN,
      SVC_LOGGING_LEVEL: "warn",
    },
  });
}

const caller = (base: string) => jsonCaller(base, ADMIN);

/**
 * An OpAMP collector that knows every replica's URL: it keeps its
 * instance_uid, applies what it is sent, and when its connection drops it
 * connects to the next URL and reports its full state again.
 */
class FailoverCollector {
  readonly uid = uuidBytes();
  private seq = 0n;
  private ws: WebSocket | null = null;
  private at = 0;
  private stopped = false;
  /** The hash of the last config it applied, and that config's text. */
  hash: Uint8Array = new Uint8Array();
  body = "";
  /** When the last config arrived (performance.now()). */
  receivedAt = 0;
  connectedTo = "";

  constructor(
    readonly name: string,
    private readonly urls: string[],
    private readonly token: string,
    first: number,
  ) {
    this.at = first;
  }

  /** Opens a session on the current URL, moving to the next while one fails. */
  async connect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      const url = this.urls[this.at % this.urls.length]!;
      try {
        this.ws = await this.open(url);
        this.connectedTo = url;
        this.send({ agentDescription: description({ "service.name": this.name }), remoteConfigStatus: applied(this.hash) });
        return;
      } catch {
        this.at++;
        await Bun.sleep(Math.min(1000, 50 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
  }

  private open(url: string): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${this.token}` } } as unknown as string[]);
      ws.binaryType = "arraybuffer";
      ws.onopen = () => resolve(ws);
      ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
      ws.onmessage = (event) => this.receive(fromBinary(ServerToAgentSchema, new Uint8Array(event.data as ArrayBuffer).subarray(1)));
      ws.onclose = () => {
        if (this.ws !== ws || this.stopped) return;
        this.ws = null;
        this.at++;
        void this.connect();
      };
    });
  }

  private receive(message: ServerToAgent): void {
    const config = message.remoteConfig;
    if (config) {
      this.hash = config.configHash;
      this.body = new TextDecoder().decode(config.config!.configMap[""]!.body);
      this.receivedAt = performance.now();
      this.send({ remoteConfigStatus: applied(this.hash) });
    } else if ((message.flags & 1n) === 1n) {
      this.send({ agentDescription: description({ "service.name": this.name }), remoteConfigStatus: applied(this.hash) });
    }
  }

  private send(fields: Record<string, unknown>): void {
    this.seq++;
    const body = toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: this.uid, sequenceNum: this.seq, capabilities: CAPS, ...fields }));
    const frame = new Uint8Array(body.length + 1);
    frame.set(body, 1);
    this.ws?.send(frame);
  }

  stop(): void {
    this.stopped = true;
    this.ws?.close();
  }
}

interface Status {
  commit: string;
  state: string;
  counts: Record<string, number>;
  collectors: { id: string; state: string }[];
}

describe("two replicas on one PostgreSQL database", () => {
  test("publish reaches both replicas' collectors; they survive losing a replica; history is shared", async () => {
    // Both start at once on the empty database: one creates the first UI admin and prints it, the other starts without.
    const started = await Promise.all([replica(), replica()]);
    expect(started.filter((r) => r.stdout().includes("UI login: admin, password in ")).length).toBe(1);
    let a = started[0]!;
    const b = started[1]!;
    const onA = caller(a.base);
    const onB = caller(b.base);
    const route = await deploymentKit(onA);
    const wsUrl = (server: ServerProcess) => `${server.base.replace(/^http/, "ws")}/v1/opamp`;
    const urls = [wsUrl(a), wsUrl(b)];

    const clients: FailoverCollector[] = [];
    const ids = new Map<FailoverCollector, string>();
    for (let i = 0; i < 6; i++) {
      const { id } = await onA<{ id: string }>("/collectors", "POST", { name: `ha-${i}` });
      await route(id, `/var/log/ha-${i}/*.log`);
      // Enrollment tokens are minted on B: either replica serves every record.
      const { token } = await onB<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: id });
      const client = new FailoverCollector(`ha-${i}`, urls, token, i % 2);
      ids.set(client, id);
      clients.push(client);
    }
    try {
      await within(Promise.all(clients.map((c) => c.connect())), 30_000, "every collector's first session");
      expect(clients.filter((c) => c.connectedTo === urls[1]).length).toBe(3);
      await until(async () => (await onB<{ items: { status: string }[] }>("/collectors")).items.every((c) => c.status === "online"));

      await onA("/commit", "POST", { message: "first" });
      const published = performance.now();
      await onA("/publish", "POST", {});
      await until(async () => clients.every((c) => c.body.includes(`/var/log/${c.name}/`)), 10_000);
      const latest = Math.max(...clients.map((c) => c.receivedAt - published));
      console.log(`publish on A → last collector (either replica) had its config after ${latest.toFixed(0)} ms`);

      const settled = async (server: typeof onA) => {
        const status = await server<Status>("/publish/status");
        return status.state === "completed" && status.counts.current === clients.length ? status : null;
      };
      const [statusA, statusB] = [await until(() => settled(onA)), await until(() => settled(onB))];
      expect(statusB).toEqual(statusA);

      // kill -9 A: its clients move to B and stay current there.
      const moved = clients.filter((c) => c.connectedTo === urls[0]);
      await a.stop("SIGKILL");
      await until(async () => moved.every((c) => c.connectedTo === urls[1]), 15_000);
      await until(async () => {
        const status = await onB<Status>("/publish/status");
        const collectors = (await onB<{ items: { id: string; status: string }[] }>("/collectors")).items;
        return status.counts.current === clients.length && collectors.every((c) => c.status === "online");
      }, 15_000);

      // B alone now serves all six: a change committed and published there reaches every one.
      const [destination] = (await onB<{ items: { id: string; name: string; type: string }[] }>("/destinations")).items;
      await onB(`/destinations/${destination!.id}`, "PUT", {
        name: destination!.name,
        type: destination!.type,
        config: { endpoint: "https://otlp-b.example.com" },
      });
      const commit = await onB<{ commit: string }>("/commit", "POST", { message: "made on B" });
      await onB("/publish", "POST", {});
      await until(async () => clients.every((c) => c.body.includes("otlp-b.example.com")), 10_000);
      await until(() => settled(onB));

      // That commit is the head of history on a restarted A, which reports the same rollout.
      a = await replica(a.port);
      const history = await caller(a.base)<{ items: { commit: string; message: string }[] }>("/commits");
      expect(history.items.map((c) => c.message)).toEqual(["made on B", "first"]);
      expect(history.items[0]!.commit).toBe(commit.commit);
      expect(await caller(a.base)<Status>("/publish/status")).toEqual(await onB<Status>("/publish/status"));
    } finally {
      for (const c of clients) c.stop();
    }
  }, 90_000);
});
