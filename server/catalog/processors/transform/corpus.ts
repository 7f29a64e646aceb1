/** Transform processor configs the conformance test renders, one per signal (folder.ts). */
import type { Signal } from "../../../../shared/config-records.ts";
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: Record<Signal, readonly CorpusConfig[]> = {
  logs: [
    {
      log_statements: [
        { context: "resource", statements: ['set(attributes["env"], "prod") where attributes["env"] == nil'] },
        // Fields every log source delivers alike on both runtimes (render/parity.ts refuses the others on Alloy).
        { context: "log", statements: ['replace_pattern(attributes["path"], "token=\\\\S+", "token=***") where attributes["path"] != nil'] },
      ],
    },
  ],
  metrics: [{ error_mode: "silent", metric_statements: [{ context: "datapoint", statements: ["limit(attributes, 10, [])"] }] }],
  traces: [{ error_mode: "propagate", trace_statements: [{ context: "span", statements: ['delete_key(attributes, "secret")'] }] }],
};
