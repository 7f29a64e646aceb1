/**
 * The load processes of bench/fleet.ts, each its own Bun process (own event
 * loop, own RLIMIT_NOFILE) so the load generators stay off the server's
 * event loop:
 *
 * - `ws <url> <agents.json> <heartbeatSeconds>`: OpAMP WebSocket agents (frame
 *   header 0x00 + AgentToServer). Each sends its description (the five bench
 *   attributes as non-identifying attributes), a heartbeat every
 *   `heartbeatSeconds`, and answers every pushed config with APPLIED.
 * - `poll <base> <agents.json> <pollSeconds> <maxInFlight>`: OpAMP-over-HTTP
 *   agents and Alloy-style remote-config pollers, each polling every
 *   `pollSeconds` from a random phase. Requests go through Bun's fetch, whose
 *   keep-alive pool holds at most `maxInFlight` connections per process (that
 *   many polls in flight, the rest wait their turn; the wait is reported as lag).
 * - `query <base> <adminToken> <perSecond> <path>…`: REST list calls at a fixed
 *   rate (an open loop), latencies recorded per window.
 *
 * Commands arrive as lines on stdin; progress leaves as one JSON line on
 * stdout every 250 ms:
 * - `mark`: remember the config hash every agent holds now; `changed` counts
 *   agents holding another hash since (the publish's new config).
 * - `published <epochMs>`: the publish was answered then; a poll that started
 *   later and still got the marked hash counts as `stale` (the server answered
 *   an old config after the publish).
 * - `window <label>` / `end` (query): start a latency window; print its summary.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { readFileSync } from "node:fs";
import { AgentToServerSchema, ServerToAgentFlags, ServerToAgentSchema } from "../server/gen/opamp/v1/opamp_pb.ts";
import { GetConfigRequestSchema, GetConfigResponseSchema, RemoteConfigStatuses } from "../server/gen/collector/v1/collector_pb.ts";
import { applied, CAPS, description } from "../test/opamp/helpers.ts";
import { percentile } from "./lib.ts";

export interface FleetAgent {
  id: string;
  token: string;
  kind: "ws" | "opamp-http" | "rcfg";
  /** OpAMP instance_uid, 32 hex digits (OpAMP agents only). */
  uid?: string;
  attributes: Record<string, string>;
}

/** What a ws or poll process reports. */
export interface ClientProgress {
  /** Agents that hold a config. */
  ready: number;
  /** Agents whose hash differs from the one they held at `mark`. */
  changed: number;
  /** Wall-clock ms of the latest change since `mark`. */
  lastChangeAt: number;
  /** Polls started after `published` that still got the marked hash. */
  stale: number;
  /** Polls answered / failed (poll), sockets that failed or closed (ws). */
  polls: number;
  errors: number;
  /** Largest wait of a due poll for a free slot (since `mark`, once marked), ms. */
  maxLagMs: number;
}

const REPORT_FULL_STATE = BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportFullState);

function newProgress(): ClientProgress {
  return { ready: 0, changed: 0, lastChangeAt: 0, stale: 0, polls: 0, errors: 0, maxLagMs: 0 };
}

/** Hash bookkeeping shared by both kinds: per agent the hash it holds and the one it held at `mark`. */
class Hashes {
  readonly progress = newProgress();
  private readonly held = new Map<number, string>();
  private marked = new Map<number, string>();
  private markedAt = 0;
  publishedAt = Infinity;

  mark(): void {
    this.marked = new Map(this.held);
    this.markedAt = Date.now();
    this.publishedAt = Infinity;
    Object.assign(this.progress, { changed: 0, lastChangeAt: 0, stale: 0, maxLagMs: 0 });
  }

  /** An answer for agent `i` to a request started at `startedAt`; `hash` null = not modified. */
  answered(i: number, hash: string | null, startedAt: number): void {
    const before = this.held.get(i);
    if (hash !== null && hash !== before) {
      if (before === undefined) this.progress.ready++;
      this.held.set(i, hash);
      if (this.markedAt > 0 && before === this.marked.get(i)) {
        this.progress.changed++;
        this.progress.lastChangeAt = Date.now();
      }
    }
    const now = this.held.get(i);
    if (startedAt >= this.publishedAt && now !== undefined && now === this.marked.get(i)) this.progress.stale++;
  }

  lag(ms: number): void {
    if (ms > this.progress.maxLagMs) this.progress.maxLagMs = ms;
  }
}

async function commands(on: (words: string[]) => void): Promise<void> {
  for await (const line of console) on(line.trim().split(/\s+/));
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const frame = (body: Uint8Array) => {
  const out = new Uint8Array(body.length + 1);
  out.set(body, 1);
  return out;
};

async function ws(url: string, file: string, heartbeatSeconds: number): Promise<void> {
  const agents = JSON.parse(readFileSync(file, "utf8")) as FleetAgent[];
  const hashes = new Hashes();
  setInterval(() => console.log(JSON.stringify(hashes.progress)), 250);
  void commands(([command]) => command === "mark" && hashes.mark());
  const open = (agent: FleetAgent, i: number) =>
    new Promise<void>((resolve) => {
      const uid = Buffer.from(agent.uid!, "hex");
      let seq = 0n;
      const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${agent.token}` } } as unknown as string[]);
      socket.binaryType = "arraybuffer";
      const send = (fields: Record<string, unknown>) =>
        socket.send(frame(toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uid, sequenceNum: ++seq, capabilities: CAPS, ...fields }))));
      socket.onopen = () => {
        send({ agentDescription: description({}, agent.attributes) });
        // A heartbeat at the server's default interval (settings.ts DEFAULT_HEARTBEAT_SECONDS): without it
        // the server marks the collector offline.
        setTimeout(
          () => {
            const beat = setInterval(() => (socket.readyState === WebSocket.OPEN ? send({}) : clearInterval(beat)), heartbeatSeconds * 1000);
          },
          Math.random() * heartbeatSeconds * 1000,
        );
      };
      socket.onmessage = (event) => {
        const message = fromBinary(ServerToAgentSchema, new Uint8Array(event.data as ArrayBuffer).subarray(1));
        if (message.remoteConfig) {
          const hash = message.remoteConfig.configHash;
          hashes.answered(i, hex(hash), 0);
          send({ remoteConfigStatus: applied(hash) });
        }
        resolve();
      };
      socket.onerror = () => {
        hashes.progress.errors++;
        resolve();
      };
      socket.onclose = () => {
        hashes.progress.errors++;
        resolve();
      };
    });
  // A bounded number of handshakes in flight.
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < agents.length) {
        const i = next++;
        await open(agents[i]!, i);
      }
    }),
  );
}

async function poll(base: string, file: string, pollSeconds: number, maxInFlight: number): Promise<void> {
  const agents = JSON.parse(readFileSync(file, "utf8")) as FleetAgent[];
  const hashes = new Hashes();
  setInterval(() => console.log(JSON.stringify(hashes.progress)), 250);
  void commands(([command, at]) => {
    if (command === "mark") hashes.mark();
    if (command === "published") hashes.publishedAt = Number(at);
  });

  // A slot pool: at most maxInFlight requests (so connections) at a time.
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    if (inFlight < maxInFlight) inFlight++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  };

  const opampUrl = `${base}/v1/opamp`;
  const rcfgUrl = `${base}/collector.v1.CollectorService/GetConfig`;
  const run = (agent: FleetAgent, i: number) => {
    const auth = `Bearer ${agent.token}`;
    // The config hash held: remote config's is an opaque string, OpAMP's bytes.
    let rcfgHash = "";
    let hash: Uint8Array | null = null;
    // OpAMP over HTTP: the sequence, whether the server asked for a full report, an APPLIED owed.
    const uid = agent.uid ? Buffer.from(agent.uid, "hex") : undefined;
    let seq = 0n;
    let full = true;
    let owed = false;
    let statusOwed = false;
    const once = async (due: number): Promise<void> => {
      await slot();
      const started = Date.now();
      hashes.lag(started - due);
      try {
        if (agent.kind === "rcfg") {
          // The attributes on every poll (as remotecfg.ts says Alloy sends them); the status of a config once,
          // on the poll after it arrived (proto/collector/v1: "Unset while unchanged since the previous request").
          const body = toBinary(
            GetConfigRequestSchema,
            create(GetConfigRequestSchema, {
              id: agent.id,
              hash: rcfgHash,
              localAttributes: agent.attributes,
              ...(statusOwed ? { remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_APPLIED } } : {}),
            }),
          );
          statusOwed = false;
          const res = await fetch(rcfgUrl, {
            method: "POST",
            headers: { "Content-Type": "application/proto", "Connect-Protocol-Version": "1", Authorization: auth },
            body,
          });
          if (res.status !== 200) throw new Error(`${res.status}`);
          const answer = fromBinary(GetConfigResponseSchema, await res.bytes());
          if (!answer.notModified) {
            rcfgHash = answer.hash;
            statusOwed = true;
          }
          hashes.answered(i, answer.notModified ? null : answer.hash, started);
        } else {
          const message = create(AgentToServerSchema, {
            instanceUid: uid,
            sequenceNum: ++seq,
            capabilities: CAPS,
            ...(full ? { agentDescription: description({}, agent.attributes) } : {}),
            ...(hash ? { remoteConfigStatus: applied(hash) } : {}),
          });
          const res = await fetch(opampUrl, {
            method: "POST",
            headers: { "Content-Type": "application/x-protobuf", Authorization: auth },
            body: toBinary(AgentToServerSchema, message),
          });
          if (res.status !== 200) throw new Error(`${res.status}`);
          const answer = fromBinary(ServerToAgentSchema, await res.bytes());
          full = (answer.flags & REPORT_FULL_STATE) !== 0n;
          if (answer.remoteConfig) {
            hash = answer.remoteConfig.configHash;
            owed = true;
          }
          hashes.answered(i, answer.remoteConfig ? hex(hash!) : null, started);
        }
        hashes.progress.polls++;
      } catch {
        hashes.progress.errors++;
      } finally {
        release();
      }
    };
    const loop = async () => {
      // As a Go time.Ticker, which "drops ticks to make up for slow receivers" (Go's src/time/tick.go):
      // a tick missed while a poll was slow is dropped, not made up.
      for (let due = Date.now(); ; due = Math.max(due + pollSeconds * 1000, Date.now())) {
        await Bun.sleep(Math.max(0, due - Date.now()));
        await once(due);
        // As opamp-go's HTTP client: a received config's status is sent at once, not at the next poll
        // (client/internal/clientcommon.go, SetRemoteConfigStatus calls ScheduleSend).
        while (owed) {
          owed = false;
          await once(Date.now());
        }
      }
    };
    setTimeout(loop, Math.random() * pollSeconds * 1000);
  };
  agents.forEach(run);
}

async function query(base: string, token: string, perSecond: number, paths: string[]): Promise<void> {
  let latencies: number[] = [];
  let label: string | null = null;
  let errors = 0;
  void commands(([command, name]) => {
    if (command === "window") {
      latencies = [];
      errors = 0;
      label = name ?? "window";
    } else if (command === "end" && label !== null) {
      const sorted = [...latencies].sort((a, b) => a - b);
      console.log(
        JSON.stringify({ label, requests: sorted.length, errors, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN }),
      );
      label = null;
    }
  });
  const headers = { Authorization: `Bearer ${token}` };
  // An open loop at a fixed rate, each latency from the request's scheduled time: a server that stalls
  // shows the stall in every request due meanwhile, not just in the one that was waiting.
  const every = 1000 / perSecond;
  for (let n = 0, due = performance.now(); ; n++, due += every) {
    await Bun.sleep(Math.max(0, due - performance.now()));
    if (label === null) continue;
    const window = label;
    const scheduled = due;
    void fetch(`${base}${paths[n % paths.length]!}`, { headers })
      .then(async (res) => {
        if (res.status !== 200) throw new Error(String(res.status));
        await res.arrayBuffer();
      })
      .then(
        () => label === window && latencies.push(performance.now() - scheduled),
        () => label === window && errors++,
      );
  }
}

if (import.meta.main) {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === "ws") await ws(args[0]!, args[1]!, Number(args[2]));
  else if (mode === "poll") await poll(args[0]!, args[1]!, Number(args[2]), Number(args[3]));
  else if (mode === "query") await query(args[0]!, args[1]!, Number(args[2]), args.slice(3));
  else throw new Error(`unknown mode ${mode}`);
}
