/** The collector and agent channels the edge serves beside the REST API (DESIGN.md §4). */
import type { App } from "./app.ts";
import type { Channel } from "./http/channel.ts";
import { OpampChannel } from "./opamp/channel.ts";
import { remoteConfigChannel } from "./remotecfg/remotecfg.ts";

export function collectorChannels(app: App): Channel[] {
  return [new OpampChannel(app), remoteConfigChannel(app), app.telemetry.channel(app), app.agentChannel];
}
