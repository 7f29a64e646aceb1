import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { isHostEnvRef, isKeepMarker, isPlainValue, isSecretRef, Sensitive, sensitiveLeaves, valueAt, withValueAt } from "../../shared/sensitive.ts";
import { markedSecrets, secretMarker, secretUpdatedAt } from "./values.ts";

const schema = Type.Object({
  endpoint: Type.String(),
  token: Type.Optional(Sensitive(Type.String())),
  headers: Type.Record(Type.String({ pattern: "^[A-Za-z-]+$" }), Sensitive(Type.String(), { plainAllowed: true })),
  list: Type.Optional(Type.Array(Type.Object({ password: Sensitive(Type.String()) }))),
});

describe("sensitive leaves", () => {
  test("walks properties, record entries and array items the value fills", () => {
    const value = { endpoint: "x", headers: { Authorization: "a", "X-Org": { value: "o", secret: false } }, list: [{ password: "p" }] };
    const leaves = sensitiveLeaves(schema, value).map((l) => [l.path.join("."), l.value]);
    expect(leaves).toEqual([
      ["headers.Authorization", "a"],
      ["headers.X-Org", { value: "o", secret: false }],
      ["list.0.password", "p"],
    ]);
    expect(sensitiveLeaves(schema, { endpoint: "x" })).toEqual([]);
  });

  test("the schema carries the mark for forms", () => {
    expect(JSON.parse(JSON.stringify(schema.properties.token))).toMatchObject({ type: "string", sensitive: true });
    expect(JSON.parse(JSON.stringify(schema.properties.headers.patternProperties))).toMatchObject({
      "^[A-Za-z-]+$": { sensitive: true, plainAllowed: true },
    });
  });
});

describe("forms", () => {
  const id = Bun.randomUUIDv7("hex", new Date("2026-05-01T10:00:00.123Z"));
  test("each form is told apart, extra keys refused", () => {
    expect(isSecretRef({ secret: id })).toBe(true);
    expect(isSecretRef({ secret: "not-an-id" })).toBe(false);
    expect(isSecretRef({ secret: id, extra: 1 })).toBe(false);
    expect(isHostEnvRef({ env: "TOKEN" })).toBe(true);
    expect(isPlainValue({ value: "x", secret: false })).toBe(true);
    expect(isPlainValue({ value: "x" })).toBe(false);
    expect(isKeepMarker({ secret: true, set: true, updatedAt: "…" })).toBe(true);
    expect(isKeepMarker({ secret: true, value: "x" })).toBe(false);
  });

  test("a version's id tells when it was set", () => {
    expect(secretUpdatedAt(id)).toBe("2026-05-01T10:00:00.123Z");
  });

  test("markers are found only quoted, each id once", () => {
    const other = Bun.randomUUIDv7();
    const body = `a: "${secretMarker(id)}"\nb: "${secretMarker(id)}"\nc: ${secretMarker(other)}\n`;
    expect(markedSecrets(body)).toEqual([id]);
  });

  test("paths read and write copies", () => {
    const root = { headers: { A: "1" }, list: [{ p: "x" }] };
    const next = withValueAt(root, ["list", "0", "p"], "y");
    expect(valueAt(next, ["list", "0", "p"])).toBe("y");
    expect(root.list[0]!.p).toBe("x");
    expect(next.headers).toBe(root.headers);
    expect(valueAt(root, ["headers", "missing", "deep"])).toBeUndefined();
  });
});
