import { describe, expect, test } from "bun:test";
import type { ChannelRequest } from "./channel.ts";
import { channelCredential } from "./credential.ts";

/** A channel request as the edge hands it over: only what the credential check reads. */
function request(authorization: string | null, peer: { secure: boolean; remoteAddr: string | null }): ChannelRequest {
  const headers: Record<string, string> = authorization === null ? {} : { Authorization: authorization };
  return { req: new Request("http://svc.example/v1/x", { headers }), ...peer } as ChannelRequest;
}

const REMOTE_PLAIN = { secure: false, remoteAddr: "203.0.113.9" };

describe("channelCredential", () => {
  test("a Bearer token over TLS, or from a loopback peer in the clear, is the credential", () => {
    expect(channelCredential(request("Bearer svcct_abc", { secure: true, remoteAddr: "203.0.113.9" }), "tls")).toEqual({ ok: true, token: "svcct_abc" });
    expect(channelCredential(request("bearer  svcct_abc ", { secure: false, remoteAddr: "127.0.0.1" }), "tls")).toEqual({ ok: true, token: "svcct_abc" });
    expect(channelCredential(request("Bearer svcct_abc", { secure: false, remoteAddr: "::1" }), "tls")).toEqual({ ok: true, token: "svcct_abc" });
  });

  test("under 'tls', plaintext over a network is refused before the token is looked at", () => {
    expect(channelCredential(request("Bearer svcct_abc", REMOTE_PLAIN), "tls")).toEqual({ ok: false, refused: "plaintext" });
    expect(channelCredential(request(null, REMOTE_PLAIN), "tls")).toEqual({ ok: false, refused: "plaintext" });
    expect(channelCredential(request(null, { secure: false, remoteAddr: null }), "tls")).toEqual({ ok: false, refused: "plaintext" });
  });

  test("under 'any', plaintext over a network is taken", () => {
    expect(channelCredential(request("Bearer svcct_abc", REMOTE_PLAIN), "any")).toEqual({ ok: true, token: "svcct_abc" });
  });

  test("no Authorization header, Basic or a malformed Bearer is a missing token", () => {
    for (const header of [null, "Basic dXNlcjpwdw==", "Bearer", "Bearer a b", "Token svcct_abc"]) {
      expect(channelCredential(request(header, { secure: true, remoteAddr: null }), "tls")).toEqual({ ok: false, refused: "missing" });
      expect(channelCredential(request(header, REMOTE_PLAIN), "any")).toEqual({ ok: false, refused: "missing" });
    }
  });
});
