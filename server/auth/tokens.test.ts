import { expect, test } from "bun:test";
import { bearerToken, digestsEqual, hashToken, mintToken, tokenKind } from "./tokens.ts";

test("tokens carry their kind's prefix and 256 bits of base62", () => {
  expect(mintToken("serviceAccount")).toMatch(/^svcsa_[0-9A-Za-z]{43}$/);
  expect(mintToken("enrollment")).toMatch(/^svcen_[0-9A-Za-z]{43}$/);
  expect(mintToken("collector")).toMatch(/^svcct_[0-9A-Za-z]{43}$/);
  const many = new Set(Array.from({ length: 1000 }, () => mintToken("collector")));
  expect(many.size).toBe(1000);
});

test("kinds are told by prefix", () => {
  expect(tokenKind("svcsa_abc")).toBe("serviceAccount");
  expect(tokenKind("svcen_abc")).toBe("enrollment");
  expect(tokenKind("svcct_abc")).toBe("collector");
  expect(tokenKind("svcag_abc")).toBe("agent");
  expect(tokenKind("ghp_abc")).toBeNull();
});

test("digests are SHA-256 hex and compare in constant time", () => {
  const digest = hashToken("svcsa_x");
  expect(digest).toMatch(/^[0-9a-f]{64}$/);
  expect(digestsEqual(digest, hashToken("svcsa_x"))).toBe(true);
  expect(digestsEqual(digest, hashToken("svcsa_y"))).toBe(false);
  expect(digestsEqual(digest, "abcd")).toBe(false);
});

test("only the Bearer scheme yields a credential", () => {
  expect(bearerToken("Bearer svcsa_abc")).toBe("svcsa_abc");
  expect(bearerToken("bearer  svcsa_abc ")).toBe("svcsa_abc");
  expect(bearerToken("Basic YWJjOmRlZg==")).toBeNull();
  expect(bearerToken("Bearer")).toBeNull();
  expect(bearerToken("Bearer a b")).toBeNull();
  expect(bearerToken(null)).toBeNull();
});
