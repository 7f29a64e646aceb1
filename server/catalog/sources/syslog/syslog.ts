/**
 * Syslog over TCP or UDP. Runtime R listens with the generally available
 * `loki.source.syslog` into `otelcol.receiver.loki`; its
 * `otelcol.receiver.syslog` is public preview and would not load on a
 * collector run at the default stability level. A `loki.relabel` keeps the
 * severity, hostname, app name, proc id and msg id labels, and the shaping
 * transform sets severity and attributes as otelcol's syslog parser does;
 * the body (the message part only) and the priority, facility, version and
 * structured-data attributes still differ (log-records.ts).
 */
import { attr, block, ref } from "../../alloy-syntax.ts";
import { lokiToOtelcol, syslogRelabelRules } from "../loki-chain.ts";
import { Closed, ListenAddress, NoReferences, StringEnum } from "../../schemas.ts";
import { defineSource } from "../../types.ts";
import { logDelivery, upstreamAbout } from "../delivery.ts";

export const syslogSource = defineSource({
  kind: "source",
  type: "syslog",
  title: "Syslog",
  description: "Listens for syslog messages (RFC 5424 or RFC 3164) over TCP or UDP.",
  signals: ["logs"],
  delivery: logDelivery(
    "syslog",
    "loki.relabel keeps severity, hostname, app name, proc id and msg id; the transform sets severity and attributes as the syslog parser names them and the message attribute from the line",
    upstreamAbout("otelcol/receiver/loki", "translator/loki", "syslogtarget", "go-syslog", "parser/syslog", "helper/parser.go", "converter.go"),
  ),
  schema: Closed({
    protocol: StringEnum(["rfc5424", "rfc3164"], { default: "rfc5424", description: "The syslog message format." }),
    transport: NoReferences(
      StringEnum(["tcp", "udp"], { default: "tcp", description: "The network transport." }),
      "it names a section of the OpenTelemetry Collector's configuration",
    ),
    listen_address: ListenAddress({ default: "0.0.0.0:54526", description: "host:port to listen on." }),
  }),
  otelcol(config) {
    return {
      type: "syslog",
      config: { protocol: config.protocol, [config.transport]: { listen_address: config.listen_address } },
    };
  },
  alloy(config, label, output) {
    return [
      block("loki.relabel", label, [attr("forward_to", []), ...syslogRelabelRules()]),
      block("loki.source.syslog", label, [
        block("listener", undefined, [attr("address", config.listen_address), attr("protocol", config.transport), attr("syslog_format", config.protocol)]),
        attr("forward_to", [ref(`otelcol.receiver.loki.${label}.receiver`)]),
        attr("relabel_rules", ref(`loki.relabel.${label}.rules`)),
      ]),
      ...lokiToOtelcol("syslog", label, output),
    ];
  },
});
