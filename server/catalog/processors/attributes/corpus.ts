/** Attributes processor configs the conformance test renders (folder.ts). */
import type { Signal } from "../../../../shared/config-records.ts";
import type { CorpusConfig } from "../../folder.ts";

/** An action of each kind with a value of each scalar type, which the resource corpus takes too. */
export const ACTIONS = [
  { key: "s", action: "insert", value: "x$y" },
  { key: "i", action: "update", value: -42 },
  { key: "f", action: "upsert", value: 1.5e-7 },
  { key: "big", action: "upsert", value: 9007199254740991 },
  { key: "b", action: "upsert", value: true },
  { key: "gone", action: "delete" },
  { key: "mail", action: "hash" },
];

const CONFIGS: readonly CorpusConfig[] = [{ actions: ACTIONS }];

export const CORPUS: Record<Signal, readonly CorpusConfig[]> = { logs: CONFIGS, metrics: CONFIGS, traces: CONFIGS };
