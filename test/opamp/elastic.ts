/**
 * Elastic's OpAMP client (@elastic/opamp-client-node, OpAMP over HTTP) as a
 * collector's stand-in: it applies every remote config it is sent and reports
 * APPLIED with the config's hash, as the supervisor does. It has no
 * effective-config, health or own-metrics capabilities (the client supports
 * only these two).
 */
import { mock } from "bun:test";
import { AgentCapabilities, RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";

// Bun's built-in "undici" has no working Client; the OpAMP client needs the real one.
mock.module("undici", () => require("../../node_modules/undici/index.js"));
const elastic = await import("@elastic/opamp-client-node");

export const { createOpAMPClient, DIAG_CH_SEND_FAIL } = elastic;
export type OpAMPClient = ReturnType<typeof elastic.createOpAMPClient>;

/** A config as the client was sent it. */
export interface AppliedConfig {
  hash: Uint8Array;
  body: string;
}

/** A started client that accepts remote config and reports each one APPLIED, after telling `onApplied`. */
export function applyingClient(options: {
  endpoint: string;
  authorization: string;
  heartbeatIntervalSeconds: number;
  identifying: Record<string, string>;
  nonIdentifying?: Record<string, string>;
  onApplied: (config: AppliedConfig) => void;
}): OpAMPClient {
  const client = createOpAMPClient({
    endpoint: options.endpoint,
    headers: { Authorization: options.authorization },
    heartbeatIntervalSeconds: options.heartbeatIntervalSeconds,
    capabilities: BigInt(AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig | AgentCapabilities.AgentCapabilities_ReportsRemoteConfig),
    onMessage: ({ remoteConfig }) => {
      if (!remoteConfig) return;
      options.onApplied({ hash: remoteConfig.configHash, body: new TextDecoder().decode(remoteConfig.config!.configMap[""]!.body) });
      client.setRemoteConfigStatus({ status: RemoteConfigStatuses.RemoteConfigStatuses_APPLIED, lastRemoteConfigHash: remoteConfig.configHash } as never);
    },
  });
  client.setAgentDescription({ identifyingAttributes: options.identifying, nonIdentifyingAttributes: options.nonIdentifying ?? {} });
  client.start();
  return client;
}
