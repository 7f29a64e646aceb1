/**
 * OpAMP wire helpers (docs/architecture.md, "OpAMP"): the endpoint's path and the server's
 * capabilities, the WebSocket frame header, the bounded
 * HTTP body reader, and ServerToAgent encoding that splices in the bytes of
 * an AgentRemoteConfig encoded once per config hash.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { AppError } from "../errors.ts";
import { readEncodedBytes } from "../lib/body.ts";
import { BoundedMap } from "../lib/bounded-map.ts";
import {
  AgentConfigMapSchema,
  AgentConfigObjectSchema,
  AgentRemoteConfigSchema,
  ServerCapabilities,
  ServerToAgentSchema,
  type ServerToAgent,
} from "../gen/opamp/v1/opamp_pb.ts";

export const OPAMP_PATH = "/v1/opamp";
export const PROTOBUF = "application/x-protobuf";

/** What every ServerToAgent says this server does. */
export const SERVER_CAPABILITIES = BigInt(
  ServerCapabilities.ServerCapabilities_AcceptsStatus |
    ServerCapabilities.ServerCapabilities_OffersRemoteConfig |
    ServerCapabilities.ServerCapabilities_AcceptsEffectiveConfig |
    ServerCapabilities.ServerCapabilities_OffersConnectionSettings,
);

/** Reads a protobuf varint at `offset`; null when truncated or longer than 10 bytes. */
export function readVarint(bytes: Uint8Array, offset = 0): { value: bigint; next: number } | null {
  let value = 0n;
  for (let i = 0; i < 10 && offset + i < bytes.length; i++) {
    const b = bytes[offset + i]!;
    value |= BigInt(b & 0x7f) << BigInt(7 * i);
    if ((b & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  return null;
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

/**
 * The protobuf inside one WebSocket frame: a varint header that must be 0,
 * then the message. Throws a message fit for the close reason otherwise.
 */
export function unframe(frame: Uint8Array): Uint8Array {
  const header = readVarint(frame);
  if (header === null) throw new Error("frame without a complete varint header");
  if (header.value !== 0n) throw new Error(`unsupported frame header ${header.value}; only 0 is defined`);
  return frame.subarray(header.next);
}

/**
 * AgentToServer.instance_uid (field 1) read from encoded bytes without
 * decoding the rest: a message over the size limit is answered by its
 * instance, not parsed. Empty when the bytes do not hold one at the top level.
 */
export function instanceUidOf(message: Uint8Array): Uint8Array {
  let offset = 0;
  while (offset < message.length) {
    const tag = readVarint(message, offset);
    if (tag === null) break;
    const field = tag.value >> 3n;
    const wire = Number(tag.value & 7n);
    offset = tag.next;
    if (wire === 0) {
      const skipped = readVarint(message, offset);
      if (skipped === null) break;
      offset = skipped.next;
    } else if (wire === 1 || wire === 5) {
      offset += wire === 1 ? 8 : 4;
    } else if (wire === 2) {
      const length = readVarint(message, offset);
      if (length === null || length.next + Number(length.value) > message.length) break;
      if (field === 1n) return message.subarray(length.next, length.next + Number(length.value));
      offset = length.next + Number(length.value);
    } else {
      break;
    }
  }
  return new Uint8Array();
}

/** Prefixes the header 0x00. */
export function frame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(message.length + 1);
  out.set(message, 1);
  return out;
}

/** The encoded AgentRemoteConfig for a rendered config, built once per hash and shared by every collector. */
export class RemoteConfigCache {
  private readonly byHash: BoundedMap<string, Uint8Array>;
  constructor(max = 256) {
    this.byHash = new BoundedMap(max);
  }

  get(hash: string, body: string, contentType = "text/yaml"): Uint8Array {
    let bytes = this.byHash.get(hash);
    if (bytes) {
      // Most recently used last.
      this.byHash.delete(hash);
      this.byHash.set(hash, bytes);
      return bytes;
    }
    bytes = toBinary(
      AgentRemoteConfigSchema,
      create(AgentRemoteConfigSchema, {
        config: create(AgentConfigMapSchema, {
          configMap: { "": create(AgentConfigObjectSchema, { body: new TextEncoder().encode(body), contentType }) },
        }),
        configHash: Buffer.from(hash, "hex"),
      }),
    );
    this.byHash.set(hash, bytes);
    return bytes;
  }

  get size(): number {
    return this.byHash.size;
  }
}

/**
 * Encodes `message` and appends field 3 (remote_config) from already-encoded
 * bytes: protobuf fields may come in any order, so the shared bytes are
 * copied, never re-encoded.
 */
export function encodeServerToAgent(message: ServerToAgent, remoteConfig?: Uint8Array): Uint8Array {
  const head = toBinary(ServerToAgentSchema, message);
  if (!remoteConfig) return head;
  const tag = [0x1a, ...varint(remoteConfig.length)];
  const out = new Uint8Array(head.length + tag.length + remoteConfig.length);
  out.set(head, 0);
  out.set(tag, head.length);
  out.set(remoteConfig, head.length + tag.length);
  return out;
}

export function serverToAgent(init: Parameters<typeof create<typeof ServerToAgentSchema>>[1]): ServerToAgent {
  return create(ServerToAgentSchema, init);
}

/**
 * The body of an OpAMP HTTP request, bounded before and after gunzip: 415 for
 * another content type or encoding, 413 over `limit` bytes.
 */
export async function readProtobufBody(req: Request, limit: number): Promise<Uint8Array> {
  const type = (req.headers.get("content-type") ?? "").trim().toLowerCase();
  if (type !== PROTOBUF) {
    throw new AppError(415, "unsupported_media_type", `OpAMP over HTTP takes Content-Type: ${PROTOBUF}, not '${type || "none"}'.`);
  }
  return readEncodedBytes(req, limit, limit);
}
