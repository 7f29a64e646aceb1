/** The kubeletstats source's upstream facts (upstream/types.ts): the collector's kubeletstats receiver (beta for metrics, metadata.yaml at 52a2d83a); Alloy has none. */
import { contrib, K8S_AUTH_TYPE } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "kubeletstats",
      kind: "receiver",
      source: contrib("receiver/kubeletstatsreceiver/config.go", "e9872306491762f624c1db225112f2f51892a0a5"),
      config: {
        // scraperhelper.ControllerConfig; kubelet.ClientConfig (internal/kubelet/client_config.go at f17fbd00) squashes
        // k8sconfig.APIConfig and adds insecure_skip_verify; confignet.TCPAddrConfig gives endpoint.
        collection_interval: "go-duration",
        auth_type: K8S_AUTH_TYPE,
        endpoint: "string",
        insecure_skip_verify: "bool",
        // kubelet.ValidMetricGroups.
        metric_groups: { list: { oneOf: ["container", "pod", "node", "volume"] } },
        node: "string",
      },
    },
  ],
  alloy: [],
};
