/** Filter processor configs the conformance test renders, one per signal (folder.ts). */
import type { Signal } from "../../../../shared/config-records.ts";
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: Record<Signal, readonly CorpusConfig[]> = {
  logs: [{ error_mode: "silent", logs: { log_record: ['attributes["path"] == "/health"'] } }],
  metrics: [{ metrics: { metric: ['name == "x"'], datapoint: ["value_int < 0"] } }],
  traces: [{ error_mode: "propagate", traces: { span: ['name == "ping"'], spanevent: ['name == "e"'] } }],
};
