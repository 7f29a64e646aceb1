/**
 * For the restart tests: an OpAMP agent that behaves as the OpAMP supervisor
 * does through opamp-go's WebSocket client. It reports the capabilities the
 * supervisor derives from svc's supervisor.yaml, redials at once when its
 * connection closes (moving to the next URL it knows), sends its full state
 * on every connect and when asked, applies remote config (APPLYING, then
 * APPLIED), and restarts its collector whenever the own-metrics settings it
 * is offered differ from the last ones it kept, as the supervisor does.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { parse } from "yaml";
import { bootstrapFiles } from "../../server/enrollment/bootstrap.ts";
import {
  AgentConfigObjectSchema,
  AgentConfigMapSchema,
  AgentToServerSchema,
  ComponentHealthSchema,
  EffectiveConfigSchema,
  RemoteConfigStatuses,
  ServerToAgentSchema,
  type ServerToAgent,
} from "../../server/gen/opamp/v1/opamp_pb.ts";
import { supervisorCapabilities } from "../supervisor/config.ts";
import { applied, description, uuidBytes, within } from "./helpers.ts";

/** What the supervisor reports for the supervisor.yaml svc renders. */
export const SUPERVISOR_CAPS = supervisorCapabilities(
  parse(bootstrapFiles("otelcol", new URL("https://svc.example.com"), "c", "svcen_x").find((f) => f.path === "/etc/opampsupervisor/config.yaml")!.body),
);

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

export class SupervisorLikeClient {
  readonly uid = uuidBytes();
  private seq = 0n;
  private ws: WebSocket | null = null;
  private at = 0;
  private stopped = false;
  /** Every message the server sent, in order. */
  readonly received: ServerToAgent[] = [];
  /** The remote config it runs, and its hash. */
  configHash = "";
  config = "";
  /** The own-metrics settings it keeps (the supervisor persists them), and how often they restarted the collector. */
  ownMetrics = "";
  collectorRestarts = 0;
  connects = 0;
  connectedTo = "";

  constructor(
    private readonly urls: string[],
    private readonly token: string,
  ) {}

  /** Connects (failing, named, when no first session opens within 30 s), and from then on redials whenever the connection closes, until stopped. */
  async start(): Promise<void> {
    await within(this.dial(), 30_000, `a first session on ${this.urls.join(" or ")}`);
  }

  private async dial(): Promise<void> {
    while (!this.stopped) {
      const url = this.urls[this.at % this.urls.length]!;
      try {
        this.ws = await this.open(url);
        this.connectedTo = url;
        this.connects++;
        this.sendFullState();
        return;
      } catch {
        // Nothing listening yet (a restarting server): try the next URL it knows, without backing off much.
        this.at++;
        await Bun.sleep(25);
      }
    }
  }

  private open(url: string): Promise<WebSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${this.token}` } } as unknown as string[]);
      ws.binaryType = "arraybuffer";
      ws.onopen = () => resolve(ws);
      ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
      ws.onmessage = (event) => this.receive(fromBinary(ServerToAgentSchema, new Uint8Array(event.data as ArrayBuffer).subarray(1)));
      ws.onclose = () => {
        if (this.ws !== ws || this.stopped) return;
        this.ws = null;
        // opamp-go redials at once; a server that went away is found on the next URL.
        this.at++;
        void this.dial();
      };
    });
  }

  private receive(message: ServerToAgent): void {
    this.received.push(message);
    const offered = message.connectionSettings?.ownMetrics;
    if (offered) {
      const settings = JSON.stringify([offered.destinationEndpoint, offered.headers?.headers.map((h) => [h.key, h.value])]);
      if (settings !== this.ownMetrics) {
        this.ownMetrics = settings;
        this.collectorRestarts++;
      }
    }
    const remote = message.remoteConfig;
    if (remote && hex(remote.configHash) !== this.configHash) {
      this.configHash = hex(remote.configHash);
      this.config = new TextDecoder().decode(remote.config!.configMap[""]!.body);
      this.send({ remoteConfigStatus: applied(remote.configHash, RemoteConfigStatuses.RemoteConfigStatuses_APPLYING) });
      this.collectorRestarts++;
      this.send({ remoteConfigStatus: applied(remote.configHash), effectiveConfig: this.effective() });
    }
    if ((message.flags & 1n) === 1n) this.sendFullState();
  }

  private effective() {
    const file = create(AgentConfigObjectSchema, { body: new TextEncoder().encode(this.config), contentType: "text/yaml" });
    return create(EffectiveConfigSchema, { configMap: create(AgentConfigMapSchema, { configMap: { "": file } }) });
  }

  private sendFullState(): void {
    this.send({
      agentDescription: description({ "service.name": "io.opentelemetry.collector", "service.instance.id": hex(this.uid) }),
      health: create(ComponentHealthSchema, { healthy: true }),
      effectiveConfig: this.effective(),
      ...(this.configHash ? { remoteConfigStatus: applied(Buffer.from(this.configHash, "hex")) } : {}),
    });
  }

  private send(fields: Record<string, unknown>): void {
    this.seq++;
    const body = toBinary(
      AgentToServerSchema,
      create(AgentToServerSchema, { instanceUid: this.uid, sequenceNum: this.seq, capabilities: SUPERVISOR_CAPS, ...fields }),
    );
    const frame = new Uint8Array(body.length + 1);
    frame.set(body, 1);
    this.ws?.send(frame);
  }

  /** The own-metrics tokens, connection-settings hashes and remote-config hashes it was sent from message `from` on. */
  seen(from = 0): { tokens: Set<string>; settingsHashes: Set<string>; configHashes: Set<string> } {
    const messages = this.received.slice(from);
    const tokens = new Set<string>();
    const settingsHashes = new Set<string>();
    const configHashes = new Set<string>();
    for (const m of messages) {
      const value = m.connectionSettings?.ownMetrics?.headers?.headers.find((h) => h.key === "Authorization")?.value;
      if (value) tokens.add(value.replace(/^Bearer /, ""));
      if (m.connectionSettings) settingsHashes.add(hex(m.connectionSettings.hash));
      if (m.remoteConfig) configHashes.add(hex(m.remoteConfig.configHash));
    }
    return { tokens, settingsHashes, configHashes };
  }

  stop(): void {
    this.stopped = true;
    this.ws?.close();
  }
}
