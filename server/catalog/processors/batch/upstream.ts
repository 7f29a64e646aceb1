/** The batch processor's upstream facts (upstream/types.ts): the collector's batch processor and Alloy's otelcol.processor.batch. */
import { alloyAt, attr, core, OUTPUT } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    { type: "batch", kind: "processor", source: core("processor/batchprocessor/config.go"), config: { send_batch_size: "uint32", timeout: "go-duration" } },
  ],
  alloy: [
    {
      name: "otelcol.processor.batch",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/processor/batch/batch.go"),
      arguments: { timeout: attr("go-duration"), send_batch_size: attr("uint32"), output: OUTPUT },
    },
  ],
};
