import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { isSealed, keyId, parseKey, sealedKeyId, Secrets, SecretsError } from "./secrets.ts";

const key = () => randomBytes(32);

describe("secrets", () => {
  test("seal then open gives the plaintext back; each seal is different (random nonce) and none shows the plaintext", () => {
    const secrets = new Secrets([key()]);
    const a = secrets.seal("svcct_plaintext", "collector_tokens/c1");
    const b = secrets.seal("svcct_plaintext", "collector_tokens/c1");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^svcsec:v1:[0-9a-f]{16}:[A-Za-z0-9_-]+$/);
    expect(a).not.toContain("plaintext");
    expect(isSealed(a)).toBe(true);
    expect(sealedKeyId(a)).toBe(secrets.keyId);
    expect(secrets.openString(a, "collector_tokens/c1")).toBe("svcct_plaintext");
    expect(secrets.open(secrets.seal(new Uint8Array([0, 255, 1]), "x"), "x")).toEqual(Buffer.from([0, 255, 1]));
  });

  test("a value opens only in the context it was sealed for", () => {
    const secrets = new Secrets([key()]);
    const sealed = secrets.seal("t", "collector_tokens/c1");
    const error = (() => {
      try {
        secrets.open(sealed, "collector_tokens/c2");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SecretsError);
    expect((error as SecretsError).code).toBe("corrupt");
  });

  test("a flipped byte anywhere fails authentication, and the error never holds the plaintext", () => {
    const secrets = new Secrets([key()]);
    const sealed = secrets.seal("the-plaintext", "ctx");
    const [head, body] = [sealed.slice(0, sealed.lastIndexOf(":") + 1), sealed.slice(sealed.lastIndexOf(":") + 1)];
    const bytes = Buffer.from(body, "base64url");
    for (let i = 0; i < bytes.length; i++) {
      const copy = Buffer.from(bytes);
      copy[i]! ^= 1;
      expect(() => secrets.open(head + copy.toString("base64url"), "ctx")).toThrow(SecretsError);
    }
    expect(() => secrets.open("svcsec:v1:0123456789abcdef", "ctx")).toThrow("not a v1 envelope");
    expect(() => secrets.open("plain", "ctx")).toThrow(SecretsError);
  });

  test("another key cannot open it (unknown_key names both ids); a keyring with the old key can, and seals with the first", () => {
    const [oldKey, newKey] = [key(), key()];
    const sealed = new Secrets([oldKey]).seal("t", "ctx");
    const other = new Secrets([newKey]);
    expect(() => other.open(sealed, "ctx")).toThrow(new RegExp(`sealed with key ${keyId(oldKey)}.*its key is ${keyId(newKey)}`));
    const ring = new Secrets([newKey, oldKey]);
    expect(ring.openString(sealed, "ctx")).toBe("t");
    expect(sealedKeyId(ring.seal("t", "ctx"))).toBe(keyId(newKey));
    expect(ring.sameKey(other)).toBe(true);
    expect(ring.sameKey(new Secrets([oldKey]))).toBe(false);
  });

  test("keys are 32 bytes written as base64 (standard or URL-safe)", () => {
    const raw = key();
    expect(parseKey(raw.toString("base64"))).toEqual(raw);
    expect(parseKey(` ${raw.toString("base64url")}\n`)).toEqual(raw);
    expect(parseKey(randomBytes(16).toString("base64"))).toBeNull();
    expect(parseKey("not a key")).toBeNull();
    expect(() => new Secrets([randomBytes(16)])).toThrow("32 bytes");
    expect(() => new Secrets([])).toThrow();
  });
});
