/** For the OpAMP tests: a raw WebSocket OpAMP agent (its own framing, independent of the server's) and message builders. */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  AgentCapabilities,
  AgentDescriptionSchema,
  AgentToServerSchema,
  RemoteConfigStatusSchema,
  RemoteConfigStatuses,
  ServerToAgentSchema,
  type ServerToAgent,
} from "../../server/gen/opamp/v1/opamp_pb.ts";
import { AnyValueSchema, KeyValueSchema } from "../../server/gen/opamp/v1/anyvalue_pb.ts";

export const CAPS =
  BigInt(AgentCapabilities.AgentCapabilities_ReportsStatus) |
  BigInt(AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig) |
  BigInt(AgentCapabilities.AgentCapabilities_ReportsRemoteConfig) |
  BigInt(AgentCapabilities.AgentCapabilities_ReportsHeartbeat) |
  BigInt(AgentCapabilities.AgentCapabilities_ReportsHealth);

export function description(attrs: Record<string, string>, nonIdentifying: Record<string, string> = {}) {
  const kv = (o: Record<string, string>) =>
    Object.entries(o).map(([key, v]) => create(KeyValueSchema, { key, value: create(AnyValueSchema, { value: { case: "stringValue", value: v } }) }));
  return create(AgentDescriptionSchema, { identifyingAttributes: kv(attrs), nonIdentifyingAttributes: kv(nonIdentifying) });
}

export function uuidBytes(): Uint8Array {
  return Buffer.from(Bun.randomUUIDv7().replaceAll("-", ""), "hex");
}

export function applied(hash: Uint8Array, status = RemoteConfigStatuses.RemoteConfigStatuses_APPLIED, errorMessage = "") {
  return create(RemoteConfigStatusSchema, { lastRemoteConfigHash: hash, status, errorMessage });
}

type A2SInit = Omit<MessageInitShape<typeof AgentToServerSchema>, "$typeName">;

/** A raw OpAMP WebSocket agent: header 0x00 + protobuf per frame. */
export class RawAgent {
  readonly uid = uuidBytes();
  seq = 0n;
  readonly received: ServerToAgent[] = [];
  private waiters: { match: (m: ServerToAgent) => boolean; resolve: (m: ServerToAgent) => void }[] = [];
  closed: { code: number; reason: string } | null = null;
  private closedWaiters: ((c: { code: number; reason: string }) => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.binaryType = "arraybuffer";
    ws.onmessage = (event) => {
      const bytes = new Uint8Array(event.data as ArrayBuffer);
      if (bytes[0] !== 0) throw new Error("frame header is not 0");
      const message = fromBinary(ServerToAgentSchema, bytes.subarray(1));
      this.received.push(message);
      this.waiters = this.waiters.filter((w) => (w.match(message) ? (w.resolve(message), false) : true));
    };
    ws.onclose = (event) => {
      this.closed = { code: event.code, reason: event.reason };
      for (const w of this.closedWaiters) w(this.closed);
    };
  }

  static connect(url: string, token: string): Promise<RawAgent> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
      const agent = new RawAgent(ws);
      ws.onopen = () => resolve(agent);
      ws.onerror = () => reject(new Error("WebSocket failed to open"));
    });
  }

  send(fields: A2SInit = {}, seq?: bigint): void {
    this.seq = seq ?? this.seq + 1n;
    const message = create(AgentToServerSchema, { instanceUid: this.uid, sequenceNum: this.seq, capabilities: CAPS, ...fields });
    const body = toBinary(AgentToServerSchema, message);
    const frame = new Uint8Array(body.length + 1);
    frame.set(body, 1);
    this.ws.send(frame);
  }

  next(match: (m: ServerToAgent) => boolean = () => true, timeoutMs = 5000): Promise<ServerToAgent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no matching ServerToAgent in time")), timeoutMs);
      this.waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  }

  /** Sends and waits for the reply. */
  async call(fields: A2SInit = {}, seq?: bigint): Promise<ServerToAgent> {
    const reply = this.next();
    this.send(fields, seq);
    return reply;
  }

  waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("socket not closed in time")), timeoutMs);
      this.closedWaiters.push((c) => (clearTimeout(timer), resolve(c)));
    });
  }

  close(): void {
    this.ws.close();
  }
}

export async function until<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, stepMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(stepMs);
  }
}
