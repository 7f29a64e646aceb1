/**
 * The k8s_events source's upstream facts (upstream/types.ts): the collector's
 * k8sobjects receiver (alpha for logs at 59506098, the revision the index
 * holds) and Alloy's loki.source.kubernetes_events.
 */
import { alloyAt, attr, contrib, K8S_AUTH_TYPE, RECEIVERS, STRINGS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

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
