/**
 * For the OpAMP tests: a raw WebSocket OpAMP agent (its own framing,
 * independent of the server's), message builders, and for the unit tests
 * beside server/opamp/ a session whose connection records what it is sent.
 */
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { constants as zlib, inflateRawSync } from "node:zlib";
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
import type { Connection } from "../../server/opamp/connection.ts";
import type { Credential } from "../../server/opamp/credential.ts";
import { newInstance } from "../../server/opamp/handler.ts";
import { newSession, type Instance } from "../../server/opamp/sessions.ts";
import { encodeServerToAgent } from "../../server/opamp/wire.ts";

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
  seq = 0n;
  readonly received: ServerToAgent[] = [];
  private waiters: { match: (m: ServerToAgent) => boolean; resolve: (m: ServerToAgent) => void }[] = [];
  closed: { code: number; reason: string } | null = null;
  private closedWaiters: ((c: { code: number; reason: string }) => void)[] = [];

  private constructor(
    readonly ws: WebSocket,
    /** Changes only when the server gives it a new one (AgentIdentification), as opamp-go takes it. */
    public uid: Uint8Array,
  ) {
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

  /** A new session; `uid` makes it a reconnect of an earlier agent's instance. */
  static connect(url: string, token: string, uid: Uint8Array = uuidBytes(), timeoutMs = 10_000): Promise<RawAgent> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } } as unknown as string[]);
      const agent = new RawAgent(ws, uid);
      const timer = setTimeout(() => (ws.close(), reject(new Error(`the WebSocket to ${url} did not open within ${timeoutMs} ms`))), timeoutMs);
      ws.onopen = () => (clearTimeout(timer), resolve(agent));
      ws.onerror = () => (clearTimeout(timer), reject(new Error(`the WebSocket to ${url} failed to open`)));
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
      const timer = setTimeout(() => reject(new Error(`no ServerToAgent within ${timeoutMs} ms matching ${waitedFor(undefined, match)}`)), timeoutMs);
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
      const timer = setTimeout(() => reject(new Error(`the server did not close the agent's socket within ${timeoutMs} ms`)), timeoutMs);
      this.closedWaiters.push((c) => (clearTimeout(timer), resolve(c)));
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** What the server knows of an instance it has just heard from, with no session. */
export function instance(uid: string, collectorId: string, seenAt = Date.now()): Instance {
  return { ...newInstance(uid, collectorId, { sequenceNum: 1n, capabilities: 0n }), seenAt };
}

/** A WebSocket session with no socket: the messages sent over it (as the agent decodes them) and its closes are recorded. */
export function recordedSession(credential: Credential) {
  const sent: ServerToAgent[] = [];
  const closes: [number, string][] = [];
  const connection: Connection = {
    persistent: true,
    send: (reply, remoteConfig) => void sent.push(fromBinary(ServerToAgentSchema, encodeServerToAgent(reply, remoteConfig))),
    close: (code, reason) => void closes.push([code, reason]),
  };
  return { session: newSession(connection, credential), sent, closes };
}

/** What a wait was for, for its failure: `what` when given, else the probe's own source text. */
function waitedFor(what: string | undefined, probe: (...args: never[]) => unknown): string {
  const text = what ?? probe.toString().replace(/\s+/g, " ");
  return text.length > 240 ? `${text.slice(0, 240)}…` : text;
}

/** Polls `probe` until it answers something truthy; past `timeoutMs`, fails naming what it waited for. */
export async function until<T>(probe: () => Promise<T | null | undefined | false>, timeoutMs = 10_000, stepMs = 20, what?: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms in vain for ${waitedFor(what, probe)}`);
    await Bun.sleep(stepMs);
  }
}

/** `promise`, or past `timeoutMs` a failure naming `what` was awaited. */
export function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`waited ${timeoutMs} ms in vain for ${what}`)), timeoutMs)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * One exchange over a WebSocket the way gorilla/websocket (opamp-go's
 * transport) speaks it with EnableCompression: it offers
 * "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
 * sends one masked, uncompressed binary frame, and reads the server's frames
 * itself, so the test sees the RSV1 bit and inflates the payload as gorilla does.
 */
export async function deflateExchange(
  url: string,
  token: string,
  message: Uint8Array,
  timeoutMs = 10_000,
): Promise<{ extensions: string | null; compressed: boolean; reply: ServerToAgent }> {
  const { port, hostname, pathname } = new URL(url);
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_s, chunk) {
        received = Buffer.concat([received, chunk]);
        wake?.();
      },
      close() {
        closed = true;
        wake?.();
      },
    },
  });
  let received = Buffer.alloc(0);
  let wake: (() => void) | undefined;
  let closed = false;
  const deadline = Date.now() + timeoutMs;
  /** Resolves on the next bytes; fails naming `what` once the socket is closed or the exchange's deadline has passed. */
  const more = (what: string) =>
    new Promise<void>((resolve, reject) => {
      if (closed) return reject(new Error(`the server closed the socket before ${what}`));
      const timer = setTimeout(() => (socket.end(), reject(new Error(`no ${what} within ${timeoutMs} ms`))), Math.max(0, deadline - Date.now()));
      wake = () => (clearTimeout(timer), resolve());
    });
  socket.write(
    `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n` +
      `Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n\r\n`,
  );
  while (received.indexOf("\r\n\r\n") < 0) await more("answer to the upgrade");
  const end = received.indexOf("\r\n\r\n");
  const head = received.subarray(0, end).toString();
  received = received.subarray(end + 4);
  if (!head.startsWith("HTTP/1.1 101")) throw new Error(`upgrade refused: ${head.split("\r\n")[0]}`);
  const extensions = /^sec-websocket-extensions:\s*(.*)$/im.exec(head)?.[1]?.trim() ?? null;

  // A client frame: FIN + binary, masked, with a 16-bit length when needed.
  const payload = Buffer.from([0, ...message]);
  const mask = Buffer.from([1, 2, 3, 4]);
  const length = payload.length < 126 ? Buffer.from([0x80 | payload.length]) : Buffer.from([0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  socket.write(Buffer.concat([Buffer.from([0x82]), length, mask, payload.map((b, i) => b ^ mask[i % 4]!)]));

  for (;;) {
    if (received.length >= 2) {
      const rsv1 = (received[0]! & 0x40) !== 0;
      let size = received[1]! & 0x7f;
      let offset = 2;
      if (size === 126) (size = received.readUInt16BE(2)), (offset = 4);
      else if (size === 127) (size = Number(received.readBigUInt64BE(2))), (offset = 10);
      if (received.length >= offset + size) {
        let data = received.subarray(offset, offset + size);
        // permessage-deflate (RFC 7692 §7.2.2): the sender dropped the trailing 00 00 ff ff.
        if (rsv1) data = inflateRawSync(Buffer.concat([data, Buffer.from([0, 0, 0xff, 0xff])]), { finishFlush: zlib.Z_SYNC_FLUSH });
        socket.end();
        return { extensions, compressed: rsv1, reply: fromBinary(ServerToAgentSchema, data.subarray(1)) };
      }
    }
    await more("whole ServerToAgent frame");
  }
}
