/**
 * The credential check every collector and agent channel makes before it
 * reads a body: may this transport carry a token, and which Bearer token does
 * the request carry. Each channel answers a refusal in its own protocol's
 * terms (a REST error, a Connect error, an OTLP status), so this says why and
 * the channel says how.
 */
import { bearerToken } from "../auth/tokens.ts";
import { isLoopback, type ChannelRequest } from "./channel.ts";

/**
 * "tls": the token must not cross a network in the clear (TLS on this server,
 * TLS ended by a trusted proxy, or a loopback peer). "any": the channel takes
 * plaintext too.
 */
export type TransportPolicy = "tls" | "any";

export type ChannelCredential =
  | { ok: true; token: string }
  /** plaintext: refused by the transport policy, before the token is looked at; missing: no Bearer token (none, Basic, malformed). */
  | { ok: false; refused: "plaintext" | "missing" };

export function channelCredential(ctx: ChannelRequest, transport: TransportPolicy): ChannelCredential {
  // TLS on this server, TLS ended by a trusted proxy (its X-Forwarded-Proto), or a loopback peer.
  if (transport === "tls" && !(ctx.secure || isLoopback(ctx.remoteAddr))) return { ok: false, refused: "plaintext" };
  const token = bearerToken(ctx.req.headers.get("authorization"));
  return token === null ? { ok: false, refused: "missing" } : { ok: true, token };
}
