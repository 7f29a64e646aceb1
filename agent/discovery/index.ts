/**
 * One discovery run, as the agent sends it (`discovery`) and `svc-agent discover`
 * prints it: the host's processes, sockets and units are read once and matched
 * against the fingerprints, the collectors and the log places.
 */
import { builtinFingerprints, matchFingerprints, mergeFingerprints } from "../fingerprints.ts";
import type { AgentConfig } from "../types.ts";
import type { DiscoveryReport } from "../../shared/agent-protocol.ts";
import { detectCollectors } from "./collectors.ts";
import { logSources } from "./logsources.ts";
import { serviceFacts } from "./services.ts";

export async function discover(config: AgentConfig): Promise<DiscoveryReport> {
  const facts = await serviceFacts();
  const fingerprints = mergeFingerprints(builtinFingerprints(), config.customFingerprints);
  const [services, collectors] = await Promise.all([matchFingerprints(fingerprints, facts), detectCollectors(config.collectors, facts)]);
  return { services, collectors, logSources: await logSources(services) };
}
