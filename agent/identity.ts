/**
 * The agent's stable id, sent on every connection so the server maps a
 * reconnect to the same host record: `agent.id` when the operator set one,
 * else derived from the host. The machine id is hashed rather than sent:
 * systemd asks applications not to expose it raw.
 */
import { createHash } from "node:crypto";
import type { HostFacts } from "../shared/agent-protocol.ts";

export function agentId(configured: string | null, host: HostFacts): string {
  if (configured !== null) return configured;
  // In a DaemonSet the pod is new on every restart; the node is what stays.
  const stable =
    host.container.kubernetes && host.container.nodeName
      ? `node:${host.container.nodeName}`
      : host.machineId !== null
        ? `machine:${host.machineId}`
        : `host:${host.hostname}`;
  return createHash("sha256").update(`svc-agent:${stable}`).digest("hex").slice(0, 32);
}
