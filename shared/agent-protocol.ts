/**
 * The `/v1/agent` channel, declared once as TypeBox schemas that give both the
 * types and the validation. The server validates what an agent sends against
 * them (an agent runs on a host we do not control) and its REST API describes
 * agents with the same ones in the OpenAPI document; the agent and the UI take
 * their types from here. Strings and lists are bounded so one agent cannot bloat
 * the store. The agent imports types only (`import type`), so its compiled
 * binary does not carry TypeBox.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./schema.ts";
import { RUNTIMES } from "./vocabulary.ts";

const Str = (maxLength = 256) => Type.String({ maxLength });
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const Pid = Type.Integer({ minimum: 0 });

/** One processor step of a suggested pipeline: a catalog processor type and its config. */
export const TemplateStepSchema = Type.Object({ type: Str(64), config: Type.Record(Type.String(), Type.Unknown()) });
export type TemplateStep = Static<typeof TemplateStepSchema>;

/** Agent ids travel in URLs and the upgrade header: keep them plain. */
export const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const HostFactsSchema = Type.Object(
  {
    hostname: Str(),
    os: Type.Object({ platform: Str(64), distro: Str(), release: Str(), kernel: Str(), arch: Str(64) }),
    cpu: Type.Object({ model: Str(), cores: Type.Integer({ minimum: 0 }) }),
    memoryBytes: Type.Number({ minimum: 0 }),
    ips: Type.Array(Str(64), { maxItems: 256 }),
    machineId: Nullable(Str(128)),
    container: Type.Object({
      inContainer: Type.Boolean(),
      kubernetes: Type.Boolean(),
      podName: Nullable(Str()),
      namespace: Nullable(Str()),
      nodeName: Nullable(Str()),
    }),
  },
  { title: "HostFacts" },
);
export type HostFacts = Static<typeof HostFactsSchema>;

/**
 * A fingerprint that matched: `evidence` says which matchers hit (`process:nginx`,
 * `port:443`, `unit:nginx.service`, `file:/etc/nginx/nginx.conf`), `logFiles` the
 * files matching its log globs that exist now (bounded), `pipeline` the source to
 * create for it, then processors.
 */
const DetectedServiceSchema = Type.Object({
  fingerprint: Str(64),
  title: Str(),
  evidence: Type.Array(Str(512), { maxItems: 64 }),
  pids: Type.Array(Pid, { maxItems: 256 }),
  ports: Type.Array(Port, { maxItems: 256 }),
  logFiles: Type.Array(Str(4096), { maxItems: 256 }),
  pipeline: Type.Object({ source: TemplateStepSchema, processors: Type.Array(TemplateStepSchema, { maxItems: 32 }) }),
});
export type DetectedService = Static<typeof DetectedServiceSchema>;

/** A collector found on the host, configured or detected; `metricsAlive`: the metrics endpoint answered 2xx on the last probe. */
const DetectedCollectorSchema = Type.Object({
  name: Str(128),
  collectorType: Type.Union(RUNTIMES.map((runtime) => Type.Literal(runtime))),
  binaryPath: Nullable(Str(4096)),
  configPath: Nullable(Str(4096)),
  serviceName: Nullable(Str()),
  running: Type.Boolean(),
  pid: Nullable(Pid),
  nativeRemoteConfig: Type.Boolean(),
  metricsUrl: Str(2048),
  metricsAlive: Type.Boolean(),
});
export type DetectedCollector = Static<typeof DetectedCollectorSchema>;

/** A place logs are found, for onboarding: a glob or directory for files, `journald` for the journal; `service` the fingerprint that suggested it. */
const LogSourceSchema = Type.Object({
  kind: Type.Union([Type.Literal("file"), Type.Literal("journald"), Type.Literal("docker"), Type.Literal("kubernetes")]),
  path: Str(4096),
  service: Nullable(Str(64)),
});
export type LogSource = Static<typeof LogSourceSchema>;

export const DiscoveryReportSchema = Type.Object(
  {
    services: Type.Array(DetectedServiceSchema, { maxItems: 256 }),
    collectors: Type.Array(DetectedCollectorSchema, { maxItems: 32 }),
    logSources: Type.Array(LogSourceSchema, { maxItems: 1024 }),
  },
  { title: "DiscoveryReport" },
);
export type DiscoveryReport = Static<typeof DiscoveryReportSchema>;

export const BrowseSummarySchema = Type.Object({ enabled: Type.Boolean(), allowedRoots: Type.Array(Str(4096), { maxItems: 64 }) });

const BrowseEntrySchema = Type.Object({
  name: Str(4096),
  type: Type.Union([Type.Literal("file"), Type.Literal("directory"), Type.Literal("symlink"), Type.Literal("other")]),
  size: Type.Number({ minimum: 0 }),
  modifiedAt: Str(64),
});
/** An entry of a directory listing. */
export type BrowseEntry = Static<typeof BrowseEntrySchema>;

export const BrowseListingSchema = Type.Object(
  {
    path: Type.String({ maxLength: 4096, description: "The real path listed." }),
    entries: Type.Array(BrowseEntrySchema),
    truncated: Type.Boolean({ description: "More entries than browse.maxDirEntries." }),
  },
  { title: "BrowseListing" },
);
export type BrowseListing = Static<typeof BrowseListingSchema>;

const SampleMode = Type.Union([Type.Literal("lines"), Type.Literal("bytes")]);
const SampleFrom = Type.Union([Type.Literal("head"), Type.Literal("tail")]);

export const BrowseSampleSchema = Type.Object(
  {
    path: Type.String({ maxLength: 4096 }),
    mode: SampleMode,
    from: SampleFrom,
    size: Type.Number({ minimum: 0, description: "File size in bytes." }),
    binary: Type.Boolean({ description: "The sample looks binary; content is then empty." }),
    // UTF-8 text (lossy) of the sample; `lines` counts the lines returned in line mode.
    content: Type.String(),
    lines: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean({ description: "The file holds more than the sample." }),
  },
  { title: "BrowseSample" },
);
export type BrowseSample = Static<typeof BrowseSampleSchema>;

/** The agent's answer to `discovery.rescan`: whether the new report differs from the last one. */
export const RescanResultSchema = Type.Object({ changed: Type.Boolean() });

/** Error codes an agent answers a request with. */
export type AgentErrorCode =
  | "browse_disabled"
  | "outside_allowed_roots"
  | "denied_by_pattern"
  | "not_found"
  | "not_a_directory"
  | "not_a_file"
  | "special_file"
  | "hard_link"
  | "permission_denied"
  | "bad_request"
  | "internal";

// Agent → server messages (JSON text frames on `/v1/agent`).

export const HelloSchema = Type.Object({
  type: Type.Literal("hello"),
  agentId: Str(128),
  version: Str(64),
  environment: Str(200),
  host: HostFactsSchema,
  browse: BrowseSummarySchema,
});
export type Hello = Static<typeof HelloSchema>;

export const DiscoverySchema = Type.Object({ type: Type.Literal("discovery"), report: DiscoveryReportSchema });

const HeartbeatSchema = Type.Object({ type: Type.Literal("heartbeat") });

/**
 * The answer to a server request: `result`, or `error`. The error code is any
 * short string, not only an `AgentErrorCode`, so an agent newer than the server
 * still gets its answer through (the relay maps codes it does not know to 502).
 */
export const ResponseSchema = Type.Object({
  type: Type.Literal("response"),
  id: Str(64),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ code: Str(64), message: Str(2048) })),
});
export type AgentResponse = Static<typeof ResponseSchema>;

const AgentMessageSchema = Type.Union([HelloSchema, DiscoverySchema, HeartbeatSchema, ResponseSchema]);
export type AgentMessage = Static<typeof AgentMessageSchema>;

// Server → agent messages.

const ServerMessageSchema = Type.Union([
  /** `credential` only on the session that enrolled the agent: its own credential, to keep and present from then on. */
  Type.Object({ type: Type.Literal("welcome"), agentId: Type.String(), heartbeatSeconds: Type.Number(), credential: Type.Optional(Type.String()) }),
  Type.Object({ type: Type.Literal("browse.list"), id: Type.String(), path: Type.String() }),
  Type.Object({ type: Type.Literal("browse.sample"), id: Type.String(), path: Type.String(), mode: SampleMode, from: SampleFrom }),
  Type.Object({ type: Type.Literal("discovery.rescan"), id: Type.String() }),
]);
export type ServerMessage = Static<typeof ServerMessageSchema>;

/** The server messages that are requests, answered by `id`. */
export type ServerRequest = Extract<ServerMessage, { id: string }>;
