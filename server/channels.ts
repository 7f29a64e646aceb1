/** The collector and agent channels the edge serves beside the REST API (DESIGN.md §4). */
import type { App } from "./app.ts";
import type { Channel } from "./http/channel.ts";

export function collectorChannels(_app: App): Channel[] {
  return [];
}
