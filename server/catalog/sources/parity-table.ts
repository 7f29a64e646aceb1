/**
 * The parity table of docs/runtime-parity.md, written from the catalog's
 * delivery data (parity-table.test.ts keeps the two equal; scripts/runtime-parity.ts
 * rewrites the doc's table, e.g. after a source type is added).
 */
import { SOURCE_TYPES } from "../registry.ts";
import { handlingOf } from "./delivery.ts";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function parityTable(): string {
  const rows = SOURCE_TYPES.map((t) => {
    const d = t.delivery;
    const from = d.upstream.map((u) => `${u.repo} \`${u.path}\` (${u.version})`).join("; ") || "—";
    return `| \`${t.type}\` | ${cell(d.otelcol)} | ${cell(d.alloy ?? "cannot run it")} | ${cell(d.difference ?? "none")} | ${cell(handlingOf(d))}${d.normalised ? `: ${cell(d.normalised)}` : ""} | ${cell(from)} |`;
  });
  return [
    `| Source type | ${RUNTIME_NAMES.otelcol} delivers | ${RUNTIME_NAMES.alloy} delivers | Difference | svc | From |`,
    "|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** `doc` with its parity table (the header row and the rows after it) replaced by the catalog's. */
export function withParityTable(doc: string): string {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.startsWith("| Source type |"));
  if (start < 0) throw new Error("The document has no parity table (a row starting '| Source type |').");
  let end = start;
  while (end < lines.length && lines[end]!.startsWith("|")) end++;
  return [...lines.slice(0, start), parityTable(), ...lines.slice(end)].join("\n");
}
