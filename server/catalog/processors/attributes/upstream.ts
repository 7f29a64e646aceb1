/** The attributes processor's upstream facts (upstream/types.ts): the collector's attributes processor and Alloy's otelcol.processor.attributes. */
import { ACTION, alloyAt, attr, blocks, contrib, OUTPUT } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

/** The actions list, which the resource processor takes too. */
export const ATTRIBUTE_ACTIONS = { list: { object: { key: "string", action: ACTION, value: "scalar" } } } as const;

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "attributes",
      kind: "processor",
      source: contrib("processor/attributesprocessor/config.go", "2de7cd28c751af27b9a8140055169f4851f1ceaa"),
      config: { actions: ATTRIBUTE_ACTIONS },
    },
  ],
  alloy: [
    {
      name: "otelcol.processor.attributes",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/processor/attributes/attributes.go"),
      // otelcol.AttrActionKeyValue, internal/component/otelcol/config_attraction.go
      arguments: { action: blocks({ key: attr("string"), action: attr(ACTION), value: attr("scalar") }), output: OUTPUT },
    },
  ],
};
