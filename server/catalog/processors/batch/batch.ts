/** Groups records into batches before export: fewer, larger requests. */
import { Type } from "@sinclair/typebox";
import { attr, block } from "../../alloy-syntax.ts";
import { Closed, Duration } from "../../schemas.ts";
import { defineProcessor } from "../../types.ts";

/** send_batch_size is a uint32 in both the collector's and Alloy's batch processor. */
const UINT32_MAX = 4294967295;

export const batchProcessor = defineProcessor({
  kind: "processor",
  type: "batch",
  title: "Batch",
  description: "Groups records into batches before export, so destinations get fewer, larger requests.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({
    send_batch_size: Type.Integer({ minimum: 1, maximum: UINT32_MAX, default: 8192, description: "Records per batch that trigger a send." }),
    // Go durations: the collector's batch processor and Alloy's both read a time.Duration.
    timeout: Duration({ grammars: ["go"], default: "200ms", description: "Longest wait before a partial batch is sent." }),
  }),
  otelcol(config) {
    return { type: "batch", config: { send_batch_size: config.send_batch_size, timeout: config.timeout } };
  },
  alloyEntry: "otelcol.processor.batch",
  alloy(config, label, _signal, output) {
    return block("otelcol.processor.batch", label, [attr("send_batch_size", config.send_batch_size), attr("timeout", config.timeout), output]);
  },
});
