/**
 * A reconnect storm, shared by test/faults/reconnect-storm.test.ts (bounded,
 * in CI) and bench/reconnect-storm.ts (the full fleet): seeds N OpAMP
 * collectors with per-collector tokens and known instance_uids into an
 * embedded state file, and runs their raw WebSocket agents from a few client
 * processes (run as `bun storm.ts <url> <agents.json>`).
 *
 * Each agent behaves as an OpAMP client should after losing its server: it
 * reconnects with jittered exponential backoff (full jitter, 250 ms doubling
 * to 15 s), and when the server refuses the upgrade with 503 or 429 it waits
 * the Retry-After the server offered (plus up to 1 s of jitter) instead. On
 * every (re)connect it sends a full report: description and the hash of the
 * config it runs, as an agent that kept its config across the outage does.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashToken, mintToken } from "../../server/auth/tokens.ts";
import type { Collector } from "../../shared/collectors.ts";
import { AgentToServerSchema, ServerToAgentSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { SqliteStore } from "../../server/store/sqlite.ts";
import type { Store } from "../../server/store/store.ts";
import { applied, CAPS, description } from "../opamp/helpers.ts";

export interface StormAgent {
  token: string;
  /** instance_uid, 32 hex digits. */
  uid: string;
}

/** What one client process reports, as one JSON line every 200 ms. */
export interface StormProgress {
  /** Agents whose session is open now and answered at least once. */
  connected: number;
  /** Agents that run a config (applied it, now or before a reconnect). */
  withConfig: number;
  /** Every config hash the agents run, with how many run it. */
  hashes: Record<string, number>;
  /** Upgrades refused with 503 / 429, each followed by a wait of its Retry-After. */
  refused503: number;
  refused429: number;
  /** Refusals with another status, or sockets that failed to open (server down). */
  failedOpens: number;
  /** Sessions opened after the first one, per client. */
  reconnects: number;
}

/**
 * Seeds `count` opamp collectors into `store`, each with a per-collector
 * token, a known instance_uid (so its agent connects as after a server
 * restart) and a placeholder target (so one publish changes every one).
 */
export async function seedOpampFleet(store: Store, count: number, namePrefix = "storm"): Promise<StormAgent[]> {
  const now = new Date().toISOString();
  const agents: StormAgent[] = [];
  const ops = [];
  for (let i = 0; i < count; i++) {
    const id = Bun.randomUUIDv7();
    const token = mintToken("collector");
    const uid = Bun.randomUUIDv7().replaceAll("-", "");
    agents.push({ token, uid });
    const collector: Collector = {
      id, name: `${namePrefix}-${i}`, environment: "prod", managementMode: "opamp", tags: {},
      status: "pending", lastSeen: null, health: null, createdAt: now, updatedAt: now,
    };
    ops.push(
      { op: "put" as const, collection: "collectors", id, data: collector },
      { op: "put" as const, collection: "tokens", id: hashToken(token), data: { kind: "collector", subjectId: id, createdAt: now } },
      { op: "put" as const, collection: "collector_tokens", id, data: { digest: hashToken(token), createdAt: now, createdBy: "seed" } },
      { op: "put" as const, collection: "opamp_instances", id: uid, data: { collectorId: id, since: now } },
      {
        op: "put" as const, collection: "collector_config", id,
        data: { collectorId: id, targetHash: "seed", targetCommit: "seed", targetSeq: 0, state: "current", error: null, updatedAt: now },
      },
    );
  }
  for (let i = 0; i < ops.length; i += 5000) await store.write(ops.slice(i, i + 5000));
  return agents;
}

/** seedOpampFleet into the embedded state file at `statePath`. */
export async function seedCollectors(statePath: string, count: number): Promise<StormAgent[]> {
  const store = new SqliteStore(statePath);
  try {
    return await seedOpampFleet(store, count);
  } finally {
    await store.close();
  }
}

export interface StormClients {
  /** The sum over client processes of their latest reports. */
  total(): StormProgress;
  /** Waits until `done` holds for the progress; after `ms` fails naming `what`, the last progress and `detail()`. */
  until(what: string, ms: number, done: (progress: StormProgress) => boolean, detail?: () => string): Promise<StormProgress>;
  stop(): Promise<void>;
}

/** Starts `processes` client processes that split `agents` between them, against the OpAMP WebSocket `url`. */
export function startClients(url: string, agents: StormAgent[], processes: number, dir: string): StormClients {
  const per = Math.ceil(agents.length / processes);
  const latest: StormProgress[] = [];
  const children = Array.from({ length: processes }, (_, p) => {
    const file = join(dir, `storm-agents-${p}.json`);
    writeFileSync(file, JSON.stringify(agents.slice(p * per, (p + 1) * per)));
    const child = Bun.spawn([process.execPath, import.meta.path, url, file], { stdout: "pipe", stderr: "inherit" });
    void (async () => {
      let buffer = "";
      const decoder = new TextDecoder();
      for await (const chunk of child.stdout as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        const lines = buffer.split("\n");
        buffer = lines.pop()!;
        for (const line of lines) if (line.trim()) latest[p] = JSON.parse(line) as StormProgress;
      }
    })();
    return child;
  });
  const clients: StormClients = {
    total() {
      const sum: StormProgress = { connected: 0, withConfig: 0, hashes: {}, refused503: 0, refused429: 0, failedOpens: 0, reconnects: 0 };
      for (const p of latest) {
        if (!p) continue;
        for (const key of ["connected", "withConfig", "refused503", "refused429", "failedOpens", "reconnects"] as const) sum[key] += p[key];
        for (const [hash, n] of Object.entries(p.hashes)) sum.hashes[hash] = (sum.hashes[hash] ?? 0) + n;
      }
      return sum;
    },
    async until(what, ms, done, detail) {
      const deadline = performance.now() + ms;
      for (;;) {
        const progress = clients.total();
        if (done(progress)) return progress;
        if (performance.now() > deadline) {
          throw new Error(`${what}: not within ${ms} ms; progress ${JSON.stringify(progress)}${detail ? `\n${detail()}` : ""}`);
        }
        await Bun.sleep(50);
      }
    },
    async stop() {
      for (const child of children) child.kill("SIGKILL");
      await Promise.all(children.map((child) => child.exited));
    },
  };
  return clients;
}

/** The WebSocket of Bun's built-in `ws` module, which (unlike the WHATWG one) shows a refused upgrade's status and headers. */
interface NodeWebSocket {
  binaryType: string;
  on(event: "open", listener: () => void): void;
  on(event: "message", listener: (data: Buffer) => void): void;
  on(event: "close", listener: () => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  on(event: "unexpected-response", listener: (req: unknown, res: { statusCode: number; headers: Record<string, string | undefined> }) => void): void;
  send(data: Uint8Array): void;
}
type NodeWebSocketClass = new (url: string, options: { headers: Record<string, string> }) => NodeWebSocket;

/** One client process: keeps every agent connected, reconnecting as described at the top. */
async function client(url: string, file: string): Promise<void> {
  // A computed specifier: there are no type declarations for `ws`; Bun serves its own.
  const wsModule = "ws";
  const WebSocketClass = ((await import(wsModule)) as { default: NodeWebSocketClass }).default;
  const agents = JSON.parse(readFileSync(file, "utf8")) as StormAgent[];
  const progress: StormProgress = { connected: 0, withConfig: 0, hashes: {}, refused503: 0, refused429: 0, failedOpens: 0, reconnects: 0 };
  const agentDescription = description({ "service.name": "storm" });
  const report = () => console.log(JSON.stringify(progress));
  setInterval(report, 200);

  const run = (agent: StormAgent) => {
    const uid = Buffer.from(agent.uid, "hex");
    let seq = 0n;
    let hash: Uint8Array | null = null;
    let attempt = 0;
    let sessions = 0;
    const connect = () => {
      const ws = new WebSocketClass(url, { headers: { Authorization: `Bearer ${agent.token}` } });
      ws.binaryType = "nodebuffer";
      let answered = false;
      let refused = false;
      let scheduled = false;
      /** Milliseconds the server asked for, from a refused upgrade. */
      let retryAfterMs: number | null = null;
      const retry = () => {
        if (scheduled) return;
        scheduled = true;
        if (answered) progress.connected--;
        else if (!refused) progress.failedOpens++;
        const backoff = Math.min(15_000, 250 * 2 ** attempt++);
        const delay = retryAfterMs !== null ? retryAfterMs + Math.random() * 1000 : Math.random() * backoff;
        setTimeout(connect, delay);
      };
      const send = (fields: Record<string, unknown>) => {
        const body = toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uid, sequenceNum: ++seq, capabilities: CAPS, ...fields }));
        const frame = new Uint8Array(body.length + 1);
        frame.set(body, 1);
        ws.send(frame);
      };
      ws.on("unexpected-response", (_req, res) => {
        refused = true;
        if (res.statusCode === 503) progress.refused503++;
        else if (res.statusCode === 429) progress.refused429++;
        else progress.failedOpens++;
        const seconds = Number(res.headers["retry-after"]);
        if ((res.statusCode === 503 || res.statusCode === 429) && seconds > 0) retryAfterMs = seconds * 1000;
        retry();
      });
      ws.on("open", () => {
        if (sessions++ > 0) progress.reconnects++;
        send({ agentDescription, ...(hash ? { remoteConfigStatus: applied(hash) } : {}) });
      });
      ws.on("message", (data) => {
        const message = fromBinary(ServerToAgentSchema, new Uint8Array(data).subarray(1));
        if (!answered) {
          answered = true;
          attempt = 0;
          progress.connected++;
        }
        if (message.remoteConfig) {
          if (hash) progress.hashes[Buffer.from(hash).toString("hex")]!--;
          else progress.withConfig++;
          hash = message.remoteConfig.configHash;
          const key = Buffer.from(hash).toString("hex");
          progress.hashes[key] = (progress.hashes[key] ?? 0) + 1;
          send({ remoteConfigStatus: applied(hash) });
        }
      });
      ws.on("error", retry);
      ws.on("close", retry);
    };
    connect();
  };
  // The first connects are paced a little, as a fleet that started over minutes would be; reconnects are not.
  for (let i = 0; i < agents.length; i++) {
    run(agents[i]!);
    if (i % 50 === 49) await Bun.sleep(5);
  }
}

if (import.meta.main) await client(process.argv[2]!, process.argv[3]!);
