/**
 * The running agent: one channel, one browser, and a discovery loop that
 * runs at start, every 10 minutes and on the server's `discovery.rescan`.
 * Only a report that differs from the last one sent on this session goes
 * out, so an idle host costs the server a heartbeat and nothing else.
 * Discovery itself is given (main.ts runs it in a child process).
 */
import type { Logger } from "./log.ts";
import { Browser } from "./browse.ts";
import { AgentChannel } from "./channel.ts";
import { hostFacts } from "./discovery/host.ts";
import { CredentialFile } from "./credential.ts";
import { agentId } from "./identity.ts";
import { pageOutRuntimeCode } from "./pageout.ts";
import type { AgentConfig } from "./types.ts";
import type { AgentMessage, DiscoveryReport, ServerRequest } from "../shared/agent-protocol.ts";

export const RESCAN_INTERVAL_MS = 10 * 60_000;

class BadRequest extends Error {
  readonly code = "bad_request";
}

export class Agent {
  private channel: AgentChannel | null = null;
  private readonly browser: Browser;
  /** The last report, and its JSON for comparing runs. */
  private report: { value: DiscoveryReport; json: string } | null = null;
  /** The JSON of the report last sent on the current session. */
  private sent: string | null = null;
  private scanning: Promise<boolean> | null = null;
  private timer: Timer | null = null;

  constructor(
    private readonly config: AgentConfig,
    private readonly log: Logger,
    private readonly version: string,
    private readonly discover: () => Promise<DiscoveryReport>,
  ) {
    this.browser = new Browser(config.browse);
  }

  async start(): Promise<void> {
    const host = await hostFacts();
    const id = agentId(this.config.agent.id, host);
    this.log.info({ agentId: id, server: this.config.server.url, browse: this.config.browse.enabled }, "svc-agent starting");
    const credential = new CredentialFile(this.config.agent.stateDir, id);
    this.channel = new AgentChannel({
      url: this.config.server.url,
      token: this.config.server.token,
      agentId: id,
      credential: () => credential.current,
      credentialIssued: (value) => {
        try {
          credential.save(value);
          this.log.info({ path: credential.path }, "enrolled: this agent's credential is stored");
        } catch (error) {
          // The credential is never logged; without the file a restart is refused until an operator allows a re-enrollment.
          this.log.error(
            { path: credential.path, err: error },
            "storing this agent's credential failed: after a restart the server refuses this host until POST /agents/{id}/re-enroll",
          );
        }
      },
      caCertPath: this.config.certificates.caCertPath,
      insecureSkipVerify: this.config.certificates.insecureSkipVerify,
      log: this.log,
      hello: async () => this.hello(id),
      opened: () => {
        this.sent = null;
        this.flush();
      },
      handle: (request) => this.handle(request),
    });
    this.channel.start();
    void this.rescan();
    this.timer = setInterval(() => void this.rescan(), RESCAN_INTERVAL_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.channel?.stop();
  }

  private async hello(id: string): Promise<Extract<AgentMessage, { type: "hello" }>> {
    const { enabled, allowedRoots } = this.config.browse;
    return {
      type: "hello",
      agentId: id,
      version: this.version,
      environment: this.config.agent.environment,
      host: await hostFacts(),
      browse: { enabled, allowedRoots },
    };
  }

  /** Runs discovery (one run at a time); true when the report changed. */
  private rescan(): Promise<boolean> {
    this.scanning ??= this.discover()
      .then((value: DiscoveryReport) => {
        const json = JSON.stringify(value);
        const changed = json !== this.report?.json;
        this.report = { value, json };
        this.flush();
        return changed;
      })
      .catch((error) => {
        this.log.error({ err: error }, "discovery failed");
        return false;
      })
      .finally(() => {
        this.scanning = null;
      });
    return this.scanning;
  }

  /**
   * Sends the current report when this session has not had it. A sent report
   * ends a burst of one-off work (start-up, a reconnect, a changed host), so
   * the code it ran goes back to the kernel (pageout.ts).
   */
  private flush(): void {
    if (this.report === null || this.report.json === this.sent || !this.channel) return;
    if (!this.channel.send({ type: "discovery", report: this.report.value })) return;
    this.sent = this.report.json;
    void pageOutRuntimeCode().then((advised) => {
      if (!advised) this.log.debug("runtime code stays resident (madvise unavailable)");
    });
  }

  private async handle(request: ServerRequest): Promise<unknown> {
    switch (request.type) {
      case "browse.list":
        if (typeof request.path !== "string") throw new BadRequest("path must be a string");
        return this.browser.list(request.path);
      case "browse.sample":
        if (typeof request.path !== "string") throw new BadRequest("path must be a string");
        if (request.mode !== "lines" && request.mode !== "bytes") throw new BadRequest("mode must be lines or bytes");
        if (request.from !== "head" && request.from !== "tail") throw new BadRequest("from must be head or tail");
        return this.browser.sample(request.path, request.mode, request.from);
      case "discovery.rescan":
        return { changed: await this.rescan() };
      default:
        throw new BadRequest(`unknown request ${JSON.stringify((request as { type: unknown }).type)}`);
    }
  }
}
