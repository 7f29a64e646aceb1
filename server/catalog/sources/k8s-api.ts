/**
 * What the Kubernetes sources share: how the receiver authenticates to the
 * Kubernetes API (contrib internal/k8sconfig APIConfig `auth_type`), and why
 * Runtime R cannot run the ones Alloy has no component for.
 */
import { StringEnum } from "../schemas.ts";

/**
 * `serviceAccount`: the collector runs in a pod and uses its service
 * account token (upstream's default); `kubeConfig`: credentials from the
 * collector host's ~/.kube/config, for a collector outside the cluster.
 * (`none` and `tls` are left out: an unauthenticated or client-certificate
 * API connection needs settings svc does not render.)
 */
export function KubernetesAuth() {
  return StringEnum(["serviceAccount", "kubeConfig"], {
    default: "serviceAccount",
    description: "How to authenticate to the Kubernetes API: the pod's service account, or the host's kubeconfig.",
  });
}

/** Alloy's receivers, as listed in grafana/alloy internal/component/otelcol/receiver at 66ebea85 (upstream/shared.ts). */
export function noAlloyReceiver(what: string, receiver: string): string {
  return `Alloy has no component that collects ${what} (grafana/alloy has no otelcol.receiver.${receiver}; the collector's ${receiver} receiver is not part of Alloy's components)`;
}
