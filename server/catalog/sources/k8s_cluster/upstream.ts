/** The k8s_cluster source's upstream facts (upstream/types.ts): the collector's k8s_cluster receiver (beta for metrics, metadata.yaml at 7f80b7b6); Alloy has none. */
import { contrib, K8S_AUTH_TYPE } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "k8s_cluster",
      kind: "receiver",
      source: contrib("receiver/k8sclusterreceiver/config.go", "b548215aa950653aa28636dffb7d0b7e87f104e1"),
      config: {
        auth_type: K8S_AUTH_TYPE,
        collection_interval: "go-duration",
        node_conditions_to_report: { list: "string" },
        allocatable_types_to_report: { list: "string" },
        // Config.Validate.
        distribution: { oneOf: ["kubernetes", "openshift"] },
      },
    },
  ],
  alloy: [],
};
