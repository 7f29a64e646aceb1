/**
 * The attributes and resource processors' actions, as the collector's
 * attraction package applies them: insert only when the key is absent,
 * update only when present, upsert either way, delete, and hash, which
 * replaces the value with the hex SHA-256 of its bytes (older collectors
 * used SHA-1). Inputs are never modified: a changed attribute list is a
 * copy, and so is whatever holds it.
 */
import { createHash } from "node:crypto";
import type { AnyValue, KeyValue, LogRecord, ResourceLogs } from "./otlp.ts";
import type { AttributeAction } from "./processors.ts";

/** The attributes after the actions; the same array when nothing changed. */
export function applyActions(attributes: KeyValue[] | undefined, actions: readonly AttributeAction[]): KeyValue[] | undefined {
  let out = attributes;
  let copied = false;
  const own = (): KeyValue[] => {
    if (!copied) {
      out = out ? [...out] : [];
      copied = true;
    }
    return out!;
  };
  for (const a of actions) {
    const i = out ? out.findIndex((kv) => kv.key === a.key) : -1;
    switch (a.action) {
      case "insert":
        if (i < 0) own().push({ key: a.key, value: toAnyValue(a.value!) });
        break;
      case "update":
        if (i >= 0) own()[i] = { key: a.key, value: toAnyValue(a.value!) };
        break;
      case "upsert":
        if (i >= 0) own()[i] = { key: a.key, value: toAnyValue(a.value!) };
        else own().push({ key: a.key, value: toAnyValue(a.value!) });
        break;
      case "delete":
        if (i >= 0) {
          // pdata's Map.Remove moves the last entry into the gap; the output order follows it.
          const list = own();
          list[i] = list[list.length - 1]!;
          list.pop();
        }
        break;
      case "hash":
        if (i >= 0) own()[i] = { key: a.key, value: { stringValue: sha256(out![i]!.value) } };
        break;
    }
  }
  return out;
}

/** Whole numbers become ints, as a YAML `value: 5` does in the collector. */
function toAnyValue(value: string | number | boolean): AnyValue {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
}

/** The bytes the collector hashes: UTF-8 text, one byte for a bool, 8 little-endian bytes for numbers; "" for the rest. */
function sha256(value: AnyValue | undefined): string {
  let bytes: Buffer;
  if (value?.stringValue !== undefined) {
    bytes = Buffer.from(value.stringValue, "utf8");
  } else if (value?.boolValue !== undefined) {
    bytes = Buffer.from([value.boolValue ? 1 : 0]);
  } else if (value?.intValue !== undefined) {
    bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(BigInt.asUintN(64, BigInt(value.intValue)));
  } else if (value?.doubleValue !== undefined) {
    bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(Number(value.doubleValue));
  } else {
    return "";
  }
  return createHash("sha256").update(bytes).digest("hex");
}

/** The attributes processor on logs: actions on each record's attributes. */
export function updateRecordAttributes(batch: ResourceLogs[], actions: readonly AttributeAction[]): ResourceLogs[] {
  const update = (record: LogRecord): LogRecord => {
    const attributes = applyActions(record.attributes, actions);
    return attributes === record.attributes ? record : { ...record, attributes };
  };
  return batch.map((rl) =>
    rl.scopeLogs === undefined
      ? rl
      : { ...rl, scopeLogs: rl.scopeLogs.map((sl) => (sl.logRecords === undefined ? sl : { ...sl, logRecords: sl.logRecords.map(update) })) },
  );
}

/** The resource processor: actions on each resource's attributes. */
export function updateResourceAttributes(batch: ResourceLogs[], actions: readonly AttributeAction[]): ResourceLogs[] {
  return batch.map((rl) => {
    const attributes = applyActions(rl.resource?.attributes, actions);
    return attributes === rl.resource?.attributes ? rl : { ...rl, resource: { ...rl.resource, attributes } };
  });
}
