/** The journald source's upstream facts (upstream/types.ts): the collector's journald receiver and Alloy's loki.source.journal. */
import { alloyAt, attr, contrib, RECEIVERS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "journald",
      kind: "receiver",
      source: contrib("pkg/stanza/operator/input/journald/config.go", "7764cbb97d3d165d663e3615f52f007fe4a91c81"),
      config: { directory: "string", units: { list: "string" } },
    },
  ],
  alloy: [
    {
      name: "loki.source.journal",
      stability: "generally-available",
      source: alloyAt("internal/component/loki/source/journal/types.go"),
      arguments: { forward_to: attr(RECEIVERS), relabel_rules: attr("capsule"), path: attr("string") },
    },
  ],
};
