/** The collector and agent channels the edge serves beside the REST API (docs/architecture.md "Channels"), and what install.sh fetches. */
import type { App } from "./app.ts";
import type { Channel } from "./channel/channel.ts";
import { BootstrapChannel } from "./enrollment/bootstrap-channel.ts";
import { DownloadsChannel } from "./enrollment/downloads.ts";
import { OpampChannel } from "./opamp/channel.ts";
import { remoteConfigChannel } from "./remotecfg/remotecfg.ts";

export function collectorChannels(app: App): Channel[] {
  return [
    new OpampChannel(app),
    remoteConfigChannel(app),
    app.telemetry.channel(app),
    app.agentChannel,
    new BootstrapChannel({ enrollment: app.enrollment, collectorTokens: app.collectorTokens, externalUrl: () => app.config.externalUrl }),
    new DownloadsChannel(app.config.downloads.dir),
  ];
}
