/** Batch processor configs the conformance test renders (folder.ts). */
import type { Signal } from "../../../../shared/config-records.ts";
import type { CorpusConfig } from "../../folder.ts";

const CONFIGS: readonly CorpusConfig[] = [{}, { send_batch_size: 4294967295, timeout: "1.5s" }];

export const CORPUS: Record<Signal, readonly CorpusConfig[]> = { logs: CONFIGS, metrics: CONFIGS, traces: CONFIGS };
