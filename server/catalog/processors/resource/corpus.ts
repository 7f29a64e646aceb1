/** Resource processor configs the conformance test renders (folder.ts). */
import type { Signal } from "../../../../shared/config-records.ts";
import type { CorpusConfig } from "../../folder.ts";
import { ACTIONS } from "../attributes/corpus.ts";

const CONFIGS: readonly CorpusConfig[] = [{ attributes: ACTIONS }];

export const CORPUS: Record<Signal, readonly CorpusConfig[]> = { logs: CONFIGS, metrics: CONFIGS, traces: CONFIGS };
