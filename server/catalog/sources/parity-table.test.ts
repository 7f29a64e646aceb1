import { describe, expect, test } from "bun:test";
import { SOURCE_TYPES } from "../registry.ts";
import { LOG_RECORD_SHAPES, LOG_SOURCE_TYPES, RECORD_PARTS } from "./log-records.ts";
import { parityTable, withParityTable } from "./parity-table.ts";

const DOC = new URL("../../../docs/runtime-parity.md", import.meta.url);

describe("the runtime parity table", () => {
  test("docs/runtime-parity.md holds the table the catalog's delivery data writes", async () => {
    const doc = await Bun.file(DOC).text();
    expect(doc).toContain(parityTable());
  });

  test("the document is what scripts/runtime-parity.ts writes: its table replaced by the catalog's, the rest kept", async () => {
    const doc = await Bun.file(DOC).text();
    expect(withParityTable(doc)).toBe(doc);
    const stale = doc.replace(/^\| `otlp` \|.*\n/m, "| `gone` | a | b | c | d | e |\n");
    expect(stale).not.toBe(doc);
    expect(withParityTable(stale)).toBe(doc);
  });

  test("every source that runs on both runtimes says where each fact came from; a difference says how it meets a read", () => {
    for (const t of SOURCE_TYPES) {
      const d = t.delivery;
      expect(d.alloy === null).toBe(t.alloy === undefined);
      if (d.alloy !== null) expect(d.upstream.length).toBeGreaterThan(0);
      expect(d.difference === null).toBe(d.differsAs === null);
    }
  });

  test("a log source differs exactly where its record shapes say a part differs", () => {
    for (const type of LOG_SOURCE_TYPES) {
      const delivery = SOURCE_TYPES.find((t) => t.type === type)!.delivery;
      const differing = RECORD_PARTS.filter((p) => LOG_RECORD_SHAPES[type][p].differs !== false);
      expect(delivery.differsAs).toBe(differing.length > 0 ? "parts" : null);
    }
    expect(
      SOURCE_TYPES.filter((t) => t.delivery.difference !== null)
        .map((t) => t.type)
        .sort(),
    ).toEqual(["hostmetrics", "journald", "k8s_events", "syslog"]);
  });
});
