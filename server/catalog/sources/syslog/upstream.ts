/** The syslog source's upstream facts (upstream/types.ts): the collector's syslog receiver and Alloy's loki.source.syslog. */
import { alloyAt, attr, blocks, contrib, RECEIVERS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "syslog",
      kind: "receiver",
      source: contrib("pkg/stanza/operator/input/syslog/config.go", "0e0721722aeaf5b0701f1f95770fc872447bdf38"),
      // The syslog parser's protocol (pkg/stanza/operator/parser/syslog/config.go).
      config: { protocol: { oneOf: ["rfc3164", "rfc5424"] }, tcp: { object: { listen_address: "string" } }, udp: { object: { listen_address: "string" } } },
    },
  ],
  alloy: [
    {
      name: "loki.source.syslog",
      stability: "generally-available",
      source: alloyAt("internal/component/loki/source/syslog/syslog.go"),
      arguments: {
        // ListenerConfig, types.go
        // ListenerConfig.Validate: protocol tcp or udp; syslog_format per loki/source/syslog/config/config.go.
        listener: blocks({ address: attr("string"), protocol: attr({ oneOf: ["tcp", "udp"] }), syslog_format: attr({ oneOf: ["rfc5424", "rfc3164", "raw"] }) }),
        forward_to: attr(RECEIVERS),
        relabel_rules: attr("capsule"),
      },
    },
  ],
};
