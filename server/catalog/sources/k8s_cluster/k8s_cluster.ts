/**
 * Kubernetes cluster metrics (deployments, pods, nodes and their states)
 * from the Kubernetes API, with contrib's k8s_cluster receiver. Runtime O
 * only: Alloy has no such receiver. Run it on one collector per cluster, as
 * every instance reports the whole cluster.
 */
import { Type } from "@sinclair/typebox";
import { Closed, Interval, StringEnum } from "../../schemas.ts";
import { defineOtelcolOnlySource } from "../../types.ts";
import { KubernetesAuth, noAlloyReceiver } from "../k8s-api.ts";

/** Node condition types (Kubernetes docs, "Node status: Condition"); each becomes a k8s.node.condition_<type> metric. */
const NODE_CONDITIONS = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"] as const;

export const k8sClusterSource = defineOtelcolOnlySource({
  kind: "source",
  type: "k8s_cluster",
  title: "Kubernetes cluster",
  description: "Collects cluster-level metrics (deployments, pods, nodes, jobs and their states) from the Kubernetes API. Run on one collector per cluster.",
  signals: ["metrics"],
  delivery: {
    otelcol: "the k8s_cluster receiver's metrics (k8s.deployment.*, k8s.pod.phase, …)",
    alloy: null,
    normalised: null,
    difference: null,
    differsAs: null,
    upstream: [],
  },
  schema: Closed({
    auth_type: KubernetesAuth(),
    // A Go time.Duration (k8sclusterreceiver Config.CollectionInterval).
    collection_interval: Interval({ grammars: ["go"], default: "10s", description: "How often to collect." }),
    node_conditions_to_report: Type.Array(StringEnum(NODE_CONDITIONS), {
      uniqueItems: true,
      default: ["Ready"],
      description: "Node conditions to report, each as a k8s.node.condition_<type> metric.",
    }),
    distribution: StringEnum(["kubernetes", "openshift"], { default: "kubernetes", description: "OpenShift adds its cluster quota metrics." }),
  }),
  otelcol(config) {
    return {
      type: "k8s_cluster",
      config: {
        auth_type: config.auth_type,
        collection_interval: config.collection_interval,
        node_conditions_to_report: config.node_conditions_to_report,
        distribution: config.distribution,
      },
    };
  },
  alloyUnavailable: noAlloyReceiver("Kubernetes cluster metrics", "k8s_cluster"),
});
