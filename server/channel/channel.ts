/**
 * Collector and agent channels (`/v1/opamp`, `/v1/metrics`, remote config,
 * `/v1/agent`) speak their own protocols and auth, so they bypass the REST
 * pipeline: the edge finds the channel by path and hands it the raw request.
 * A channel that upgrades to a WebSocket keeps per-connection state in the
 * socket's data; the edge routes socket events back to the owning channel.
 */
import type { Server, ServerWebSocket } from "bun";
import type { Logger } from "pino";

export interface SocketData {
  channel: Channel;
  /** The channel's own per-connection state. */
  state: unknown;
}

export type ChannelSocket = ServerWebSocket<SocketData>;

export interface ChannelRequest {
  req: Request;
  url: URL;
  remoteAddr: string | null;
  requestId: string;
  log: Logger;
  server: Server<SocketData>;
  /** True when the client's connection is encrypted end to end or up to a trusted TLS proxy. */
  secure: boolean;
}

export interface ChannelHealth {
  state: "up" | "degraded" | "down";
  /** Open sessions, when the channel keeps them. */
  connections?: number;
}

export interface Channel {
  /** Shown in health. */
  readonly name: string;
  /** An exact path, or a prefix ending in "/". */
  readonly path: string;
  /** Answers the request; undefined when it was upgraded to a WebSocket. */
  handle(ctx: ChannelRequest): Promise<Response | undefined>;
  open?(ws: ChannelSocket): void;
  message?(ws: ChannelSocket, message: string | Buffer): void | Promise<void>;
  close?(ws: ChannelSocket, code: number, reason: string): void;
  health(): ChannelHealth;
  /** Starts its timers and subscriptions when the edge starts serving (none run from a constructor). */
  start?(): void;
  /** Ends sessions and timers at shutdown, and stores what it still holds. */
  stop?(): void | Promise<void>;
}

export function channelFor(channels: readonly Channel[], path: string): Channel | undefined {
  return channels.find((c) => (c.path.endsWith("/") ? path.startsWith(c.path) : path === c.path));
}

/** Unsent bytes a session may hold for a peer that does not read; past it the session is closed, not buffered further. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Frames at least this large are compressed when the peer negotiated permessage-deflate; smaller ones would not shrink. */
export const COMPRESS_MIN_BYTES = 512;

/**
 * Sends a frame unless the peer has stopped reading: with more than
 * MAX_BUFFERED_BYTES already waiting, the session is closed with 1013 (try
 * again later) instead. The peer reconnects and is sent its state afresh, so
 * nothing is lost but the memory a stalled socket would have held.
 */
export function sendBounded(ws: ChannelSocket, data: string | Uint8Array): void {
  const compress = data.length >= COMPRESS_MIN_BYTES;
  if (ws.getBufferedAmount() > MAX_BUFFERED_BYTES) ws.close(1013, "not reading: reconnect to get the current state");
  else if (typeof data === "string") ws.sendText(data, compress);
  else ws.sendBinary(data, compress);
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

export function isLoopback(address: string | null): boolean {
  return address !== null && LOOPBACK.test(address);
}
