import { createHash } from "node:crypto";
import { expect, test } from "bun:test";
import { applyActions, updateRecordAttributes, updateResourceAttributes } from "./attributes.ts";
import type { KeyValue, ResourceLogs } from "./otlp.ts";
import type { AttributeAction } from "./processors.ts";

const str = (key: string, value: string): KeyValue => ({ key, value: { stringValue: value } });
const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

test("insert adds only when absent; update changes only when present; upsert does both", () => {
  const attrs = [str("a", "1")];
  expect(applyActions(attrs, [{ key: "a", action: "insert", value: "x" }])).toBe(attrs);
  expect(applyActions(attrs, [{ key: "b", action: "insert", value: "x" }])).toEqual([str("a", "1"), str("b", "x")]);
  expect(applyActions(attrs, [{ key: "b", action: "update", value: "x" }])).toBe(attrs);
  expect(applyActions(attrs, [{ key: "a", action: "update", value: "x" }])).toEqual([str("a", "x")]);
  expect(applyActions(attrs, [{ key: "a", action: "upsert", value: "x" }])).toEqual([str("a", "x")]);
  expect(applyActions(attrs, [{ key: "b", action: "upsert", value: "x" }])).toEqual([str("a", "1"), str("b", "x")]);
  expect(applyActions(undefined, [{ key: "b", action: "insert", value: "x" }])).toEqual([str("b", "x")]);
  expect(attrs).toEqual([str("a", "1")]);
});

test("values keep their JSON type: whole numbers are ints", () => {
  const actions: AttributeAction[] = [
    { key: "i", action: "insert", value: 5 },
    { key: "d", action: "insert", value: 2.5 },
    { key: "b", action: "insert", value: true },
  ];
  expect(applyActions([], actions)).toEqual([
    { key: "i", value: { intValue: "5" } },
    { key: "d", value: { doubleValue: 2.5 } },
    { key: "b", value: { boolValue: true } },
  ]);
});

test("delete removes the key as pdata does, moving the last entry into its place", () => {
  const attrs = [str("a", "1"), str("b", "2"), str("c", "3")];
  expect(applyActions(attrs, [{ key: "a", action: "delete" }])).toEqual([str("c", "3"), str("b", "2")]);
  expect(applyActions(attrs, [{ key: "z", action: "delete" }])).toBe(attrs);
  expect(applyActions([str("a", "1")], [{ key: "a", action: "delete" }])).toEqual([]);
});

test("hash replaces the value with the SHA-256 hex of the bytes the collector hashes", () => {
  const int = Buffer.alloc(8);
  int.writeBigInt64LE(-2n);
  const double = Buffer.alloc(8);
  double.writeDoubleLE(1.5);
  const attrs: KeyValue[] = [
    str("s", "alice@example.com"),
    { key: "i", value: { intValue: "-2" } },
    { key: "d", value: { doubleValue: 1.5 } },
    { key: "t", value: { boolValue: true } },
    { key: "m", value: { kvlistValue: { values: [] } } },
    str("e", ""),
  ];
  const hashed = applyActions(
    attrs,
    ["s", "i", "d", "t", "m", "e", "absent"].map((key) => ({ key, action: "hash" as const })),
  );
  expect(hashed).toEqual([
    str("s", sha256("alice@example.com")),
    str("i", sha256(int)),
    str("d", sha256(double)),
    str("t", sha256(Buffer.from([1]))),
    str("m", ""),
    str("e", sha256("")),
  ]);
  expect(sha256("alice@example.com")).toBe("ff8d9819fc0e12bf0d24892e45987e249a28dce836a85cad60e28eaaa8c6d976");
});

test("actions apply in order", () => {
  const actions: AttributeAction[] = [
    { key: "a", action: "insert", value: "x" },
    { key: "a", action: "update", value: "y" },
    { key: "a", action: "hash" },
  ];
  expect(applyActions([], actions)).toEqual([str("a", sha256("y"))]);
});

test("records and resources are copied only where they change", () => {
  const untouched = { body: { stringValue: "keep" }, attributes: [str("x", "1")] };
  const changed = { attributes: [str("secret", "s")] };
  const batch: ResourceLogs[] = [
    { resource: { attributes: [str("service.name", "api")] }, scopeLogs: [{ logRecords: [untouched, changed] }] },
    { scopeLogs: [{}] },
    {},
  ];
  const out = updateRecordAttributes(batch, [{ key: "secret", action: "delete" }]);
  expect(out[0]!.scopeLogs![0]!.logRecords![0]).toBe(untouched);
  expect(out[0]!.scopeLogs![0]!.logRecords![1]).toEqual({ attributes: [] });
  expect(changed.attributes).toEqual([str("secret", "s")]);
  expect(out[2]).toBe(batch[2]!);

  const resources = updateResourceAttributes(batch, [{ key: "env", action: "upsert", value: "prod" }]);
  expect(resources[0]!.resource!.attributes).toEqual([str("service.name", "api"), str("env", "prod")]);
  expect(resources[1]!.resource).toEqual({ attributes: [str("env", "prod")] });
  expect(resources[0]!.scopeLogs).toBe(batch[0]!.scopeLogs!);
  expect(batch[0]!.resource!.attributes).toEqual([str("service.name", "api")]);
  expect(updateResourceAttributes(batch, [{ key: "nope", action: "delete" }])[0]).toBe(batch[0]!);
});
