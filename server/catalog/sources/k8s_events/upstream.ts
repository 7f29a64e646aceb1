/**
 * The k8s_events source's upstream facts (upstream/types.ts): the collector's
 * k8sobjects receiver (alpha for logs at 59506098, the revision the index
 * holds) and Alloy's loki.source.kubernetes_events.
 */
import { alloyAt, attr, contrib, K8S_AUTH_TYPE, RECEIVERS, STRINGS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";
import type { Upstream } from "../delivery.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "k8sobjects",
      kind: "receiver",
      source: contrib("receiver/k8sobjectsreceiver/config.go", "f85f10de482f57ce9dbeeb376ae2b00b9417eed2"),
      config: {
        auth_type: K8S_AUTH_TYPE,
        // Config.Validate: error_mode and each object's mode.
        error_mode: { oneOf: ["propagate", "ignore", "silent"] },
        objects: {
          list: {
            object: {
              name: "string",
              group: "string",
              namespaces: { list: "string" },
              mode: { oneOf: ["pull", "watch"] },
              field_selector: "string",
              label_selector: "string",
            },
          },
        },
      },
    },
  ],
  alloy: [
    {
      name: "loki.source.kubernetes_events",
      stability: "generally-available",
      source: alloyAt("internal/component/loki/source/kubernetes_events/kubernetes_events.go"),
      arguments: { forward_to: attr(RECEIVERS), namespaces: attr(STRINGS) },
    },
  ],
};

/** Where the parity table's facts about what each runtime delivers were read (delivery.ts). */
export const DELIVERY_UPSTREAM: readonly Upstream[] = [
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "receiver/k8sobjectsreceiver/unstructured_to_logdata.go",
    version: "a68e9a17",
    fact: "watch mode: body = the watch event as a map (type and the Event object); attributes k8s.resource.name, event.domain and event.name; no severity.",
  },
  {
    repo: "grafana/alloy",
    path: "internal/component/loki/source/kubernetes_events/event_controller.go",
    version: "v1.18.1 (same file at 66ebea856d)",
    fact: "parseEvent: line = logfmt of name, kind, action, reason, type, msg (and more when set); labels namespace, job, instance; through otelcol.receiver.loki each label becomes a string attribute plus loki.attribute.labels; no severity.",
  },
];
