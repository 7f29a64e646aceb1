/**
 * A reconnect storm, shared by test/faults/reconnect-storm.test.ts (bounded,
 * in CI) and bench/reconnect-storm.ts (the full fleet): seeds N OpAMP
 * collectors with per-collector tokens and known instance_uids into an
 * embedded state file, and runs one real opamp-go client per collector
 * (test/peers/opampclient, a few processes of them, over WebSocket or HTTP).
 *
 * How each agent comes back after losing its server is opamp-go's own
 * (v0.23.0): a WebSocket client redials at once, then backs off exponentially
 * (cenkalti/backoff defaults: 0.5 s, ×1.5, ±50 %, up to 60 s) and waits out a
 * longer Retry-After on a 503/429 upgrade (client/wsclient.go
 * ensureConnected); an HTTP client retries its request the same way
 * (client/internal/httpsender.go sendRequestWithRetries) and polls at its
 * interval. Each applies every config it is handed and says so at once.
 */
import { hashToken, mintToken } from "../../server/auth/tokens.ts";
import type { Collector } from "../../shared/collectors.ts";
import { SqliteStore } from "../../server/store/sqlite.ts";
import type { Store } from "../../server/store/store.ts";
import { OpampGo, type GoEvent } from "../opamp/opamp-go.ts";

export interface StormAgent {
  token: string;
  /** instance_uid, 32 hex digits. */
  uid: string;
}

/** What the agents' opamp-go clients reported, summed. */
export interface StormProgress {
  /** Agents opamp-go reported connected (a WebSocket upgrade, an HTTP 200) since the last `epoch()`. */
  connected: number;
  /** Agents that were handed a config (and applied it). */
  withConfig: number;
  /** Every config hash the agents run, with how many run it. */
  hashes: Record<string, number>;
  /** Upgrades (WebSocket, from opamp-go's log) or requests (HTTP) answered 503 / 429, whose Retry-After opamp-go waits out. */
  refused503: number;
  refused429: number;
  /** Other OnConnectFailed calls, e.g. while the server was down (opamp-go v0.23.0 makes two per failed WebSocket dial). */
  failedConnects: number;
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
      id,
      name: `${namePrefix}-${i}`,
      environment: "prod",
      managementMode: "opamp",
      tags: {},
      status: "pending",
      lastSeen: null,
      health: null,
      createdAt: now,
      updatedAt: now,
    };
    ops.push(
      { op: "put" as const, collection: "collectors", id, data: collector },
      { op: "put" as const, collection: "tokens", id: hashToken(token), data: { kind: "collector", subjectId: id, createdAt: now } },
      { op: "put" as const, collection: "collector_tokens", id, data: { digest: hashToken(token), createdAt: now, createdBy: "seed" } },
      { op: "put" as const, collection: "opamp_instances", id: uid, data: { collectorId: id, since: now } },
      {
        op: "put" as const,
        collection: "collector_config",
        id,
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
  /** The progress so far. */
  total(): StormProgress;
  /** From now on `connected` counts only agents that connect again. */
  epoch(): void;
  /** Waits until `done` holds for the progress; after `ms` fails naming `what`, the last progress and `detail()`. */
  until(what: string, ms: number, done: (progress: StormProgress) => boolean, detail?: () => string): Promise<StormProgress>;
  stop(): Promise<void>;
}

/**
 * Starts one opamp-go client per agent against `url` (ws:// or http:// picks
 * the transport), spread over `processes` opampclient processes. The first
 * connects are paced, as a fleet that started over minutes would be: over
 * `spreadSeconds` when given (HTTP agents then poll spread over their
 * interval, so a restart finds some of them mid-request), else a little.
 */
export async function startClients(
  url: string,
  agents: StormAgent[],
  options: { processes: number; heartbeatSeconds?: number; spreadSeconds?: number },
): Promise<StormClients> {
  const progress: StormProgress = { connected: 0, withConfig: 0, hashes: {}, refused503: 0, refused429: 0, failedConnects: 0 };
  let connected = new Set<string>();
  const hashOf = new Map<string, string>();
  const processes = Array.from({ length: options.processes }, () => new OpampGo());
  const count = (p: number) => (event: GoEvent) => {
    const key = `${p}/${event.agent}`;
    if (event.event === "connected") connected.add(key);
    else if (event.remoteConfig) {
      const before = hashOf.get(key);
      if (before) progress.hashes[before]!--;
      else progress.withConfig++;
      hashOf.set(key, event.remoteConfig.hash);
      progress.hashes[event.remoteConfig.hash] = (progress.hashes[event.remoteConfig.hash] ?? 0) + 1;
    } else if (event.event === "log" || event.event === "connectFailed") {
      const text = event.error ?? "";
      // WebSocket: a refused upgrade is in the log ("Server responded with status=503 ..."), its OnConnectFailed says "bad handshake".
      if (/status=503|code=503/.test(text)) progress.refused503++;
      else if (/status=429|code=429/.test(text)) progress.refused429++;
      else if (event.event === "connectFailed" && !/bad handshake/.test(text)) progress.failedConnects++;
    }
  };
  processes.forEach((go, p) => go.onEvent(count(p)));
  for (let i = 0; i < agents.length; i += 50) {
    await Promise.all(
      agents.slice(i, i + 50).map((agent, j) =>
        processes[(i + j) % processes.length]!.agent({
          url,
          token: agent.token,
          uid: agent.uid,
          description: { identifying: { "service.name": "storm" } },
          autoApply: true,
          ...(options.heartbeatSeconds ? { heartbeatSeconds: options.heartbeatSeconds } : {}),
        }),
      ),
    );
    await Bun.sleep(options.spreadSeconds ? (options.spreadSeconds * 1000 * 50) / agents.length : 5);
  }
  const clients: StormClients = {
    total: () => ({ ...progress, connected: connected.size, hashes: { ...progress.hashes } }),
    epoch: () => void (connected = new Set()),
    async until(what, ms, done, detail) {
      const deadline = performance.now() + ms;
      for (;;) {
        const now = clients.total();
        if (done(now)) return now;
        if (performance.now() > deadline) {
          throw new Error(`${what}: not within ${ms} ms; progress ${JSON.stringify(now)}${detail ? `\n${detail()}` : ""}`);
        }
        await Bun.sleep(50);
      }
    },
    async stop() {
      await Promise.all(processes.map((go) => go.kill()));
    },
  };
  return clients;
}
