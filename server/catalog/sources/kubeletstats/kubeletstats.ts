/**
 * Node, pod, container and volume metrics from the kubelet's stats API on
 * the collector's own node, with contrib's kubeletstats receiver. Runtime O
 * only: Alloy has no such receiver (its cAdvisor or kubelet scrapes name the
 * metrics otherwise, as host metrics differ, render/parity.ts).
 */
import { Type } from "@sinclair/typebox";
import { Closed, Interval, StringEnum } from "../../schemas.ts";
import { defineOtelcolOnlySource } from "../../types.ts";
import { noAlloyReceiver } from "../k8s-api.ts";

/** kubelet.ValidMetricGroups (receiver/kubeletstatsreceiver/internal/kubelet). */
const METRIC_GROUPS = ["container", "pod", "node", "volume"] as const;

export const kubeletstatsSource = defineOtelcolOnlySource({
  kind: "source",
  type: "kubeletstats",
  title: "Kubelet stats",
  description: "Collects node, pod, container and volume metrics (CPU, memory, filesystem, network) from the kubelet of the collector's node.",
  signals: ["metrics"],
  delivery: {
    otelcol: "the kubeletstats receiver's metrics (k8s.pod.*, k8s.node.*, container.*)",
    alloy: null,
    normalised: null,
    difference: null,
    differsAs: null,
    upstream: [],
  },
  schema: Closed({
    auth_type: StringEnum(["serviceAccount", "none"], {
      default: "serviceAccount",
      description: "serviceAccount: authenticate to the kubelet with the pod's service account token; none: no authentication (a kubelet read-only port).",
    }),
    endpoint: Type.Optional(
      Type.String({
        pattern: "^(?:https?://)?\\S+:[0-9]{1,5}$",
        errorMessage: "must be host:port, optionally with an http:// or https:// scheme",
        description: "The kubelet, host:port; unset uses the receiver's default (the collector host's name).",
      }),
    ),
    insecure_skip_verify: Type.Boolean({ default: false, description: "Do not verify the kubelet's certificate (often self-signed)." }),
    // A Go time.Duration (scraperhelper.ControllerConfig).
    collection_interval: Interval({ grammars: ["go"], default: "10s", description: "How often to collect." }),
    metric_groups: Type.Array(StringEnum(METRIC_GROUPS), {
      minItems: 1,
      uniqueItems: true,
      default: ["container", "pod", "node"],
      description: "Which groups of metrics to collect.",
    }),
  }),
  otelcol(config) {
    return {
      type: "kubeletstats",
      config: {
        auth_type: config.auth_type,
        ...(config.endpoint !== undefined ? { endpoint: config.endpoint } : {}),
        ...(config.insecure_skip_verify ? { insecure_skip_verify: true } : {}),
        collection_interval: config.collection_interval,
        metric_groups: config.metric_groups,
      },
    };
  },
  alloyUnavailable: noAlloyReceiver("kubelet stats", "kubeletstats"),
});
