/**
 * The systemd journal. Runtime R has no otelcol journald receiver: it reads
 * with `loki.source.journal` into `otelcol.receiver.loki`. A `loki.relabel`
 * keeps the units (on `_SYSTEMD_UNIT`) and, as otelcol's default
 * `--priority info` does, priorities 0..6; the shaping transform removes the
 * labels otelcol has no attribute for. The body still differs: the MESSAGE
 * text on Runtime R, a map of every journal field on Runtime O
 * (log-records.ts).
 */
import { Type } from "@sinclair/typebox";
import { attr, block, ref } from "../../alloy-syntax.ts";
import { JOURNAL_PRIORITY_KEEP } from "../log-records.ts";
import { lokiToOtelcol } from "../loki-chain.ts";
import { Closed, HOST_PATH_REFERENCE, NoReferences } from "../../schemas.ts";
import { defineSource } from "../../types.ts";
import { logDelivery, upstreamAbout } from "../delivery.ts";

const Unit = NoReferences(
  Type.String({
    pattern: "^[A-Za-z0-9:_.@-]+$",
    errorMessage: "must be a systemd unit name such as nginx.service",
    description: "A unit name; without a suffix, .service is assumed (as journalctl --unit does).",
  }),
  "svc turns the units into Alloy's relabel expression",
);

export const journaldSource = defineSource({
  kind: "source",
  type: "journald",
  title: "systemd journal",
  description: "Reads entries from the systemd journal, optionally only those of some units.",
  signals: ["logs"],
  delivery: logDelivery(
    "journald",
    "loki.relabel keeps the units and priorities 0..6 (journalctl's default --priority info); the transform removes job and loki.attribute.labels",
    upstreamAbout("otelcol/receiver/loki", "translator/loki", "journald", "source/journal"),
  ),
  schema: Closed({
    units: Type.Array(Unit, { default: [], uniqueItems: true, description: "Units to read; empty reads every unit." }),
    directory: Type.Optional(
      NoReferences(
        Type.String({
          pattern: "^/",
          errorMessage: "must be an absolute path",
          description: "Journal directory; unset reads the system journal.",
        }),
        HOST_PATH_REFERENCE,
      ),
    ),
  }),
  otelcol(config) {
    return {
      type: "journald",
      config: {
        ...(config.directory !== undefined ? { directory: config.directory } : {}),
        ...(config.units.length > 0 ? { units: config.units } : {}),
      },
    };
  },
  alloy(config, label, output) {
    const keep = (source: string, regex: string) => block("rule", undefined, [attr("source_labels", [source]), attr("regex", regex), attr("action", "keep")]);
    return [
      block("loki.relabel", label, [
        attr("forward_to", []),
        config.units.length > 0 && keep("__journal__systemd_unit", unitRegex(config.units)),
        keep("__journal_priority", JOURNAL_PRIORITY_KEEP),
      ]),
      block("loki.source.journal", label, [
        attr("forward_to", [ref(`otelcol.receiver.loki.${label}.receiver`)]),
        attr("relabel_rules", ref(`loki.relabel.${label}.rules`)),
        config.directory !== undefined && attr("path", config.directory),
      ]),
      ...lokiToOtelcol("journald", label, output),
    ];
  },
});

const UNIT_SUFFIX = /\.(service|socket|device|mount|automount|swap|target|path|timer|slice|scope)$/;

/** An anchored (Prometheus relabel) alternation of exact unit names. */
function unitRegex(units: readonly string[]): string {
  return units
    .map((unit) => (UNIT_SUFFIX.test(unit) ? unit : `${unit}.service`))
    .map((unit) => unit.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("|");
}
