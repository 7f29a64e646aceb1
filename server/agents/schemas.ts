/**
 * What a host agent may send on `/v1/agent`, as TypeBox schemas: the channel
 * validates every message, and the REST relay every answer, against them (an agent runs on a host we do not
 * control), and the REST API's OpenAPI document describes agents with the
 * same ones. Strings and lists are bounded so one agent cannot bloat the store.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { BrowseListing, BrowseSample, DiscoveryReport, HostFacts } from "../../agent/types.ts";
import { Nullable } from "../lib/schemas.ts";

const Str = (maxLength = 256) => Type.String({ maxLength });
const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const Pid = Type.Integer({ minimum: 0 });
const Step = Type.Object({ type: Str(64), config: Type.Record(Type.String(), Type.Unknown()) });

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

export const DiscoveryReportSchema = Type.Object(
  {
    services: Type.Array(
      Type.Object({
        fingerprint: Str(64),
        title: Str(),
        evidence: Type.Array(Str(512), { maxItems: 64 }),
        pids: Type.Array(Pid, { maxItems: 256 }),
        ports: Type.Array(Port, { maxItems: 256 }),
        logFiles: Type.Array(Str(4096), { maxItems: 256 }),
        pipeline: Type.Object({ source: Step, processors: Type.Array(Step, { maxItems: 32 }) }),
      }),
      { maxItems: 256 },
    ),
    collectors: Type.Array(
      Type.Object({
        name: Str(128),
        collectorType: Type.Union([Type.Literal("otelcol"), Type.Literal("alloy")]),
        binaryPath: Nullable(Str(4096)),
        configPath: Nullable(Str(4096)),
        serviceName: Nullable(Str()),
        running: Type.Boolean(),
        pid: Nullable(Pid),
        nativeRemoteConfig: Type.Boolean(),
        metricsUrl: Str(2048),
        metricsAlive: Type.Boolean(),
      }),
      { maxItems: 32 },
    ),
    logSources: Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal("file"), Type.Literal("journald"), Type.Literal("docker"), Type.Literal("kubernetes")]),
        path: Str(4096),
        service: Nullable(Str(64)),
      }),
      { maxItems: 1024 },
    ),
  },
  { title: "DiscoveryReport" },
);

export const BrowseSummarySchema = Type.Object({ enabled: Type.Boolean(), allowedRoots: Type.Array(Str(4096), { maxItems: 64 }) });

export const HelloSchema = Type.Object({
  type: Type.Literal("hello"),
  agentId: Str(128),
  version: Str(64),
  environment: Str(200),
  host: HostFactsSchema,
  browse: BrowseSummarySchema,
});

export const DiscoverySchema = Type.Object({ type: Type.Literal("discovery"), report: DiscoveryReportSchema });

export const ResponseSchema = Type.Object({
  type: Type.Literal("response"),
  id: Str(64),
  result: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.Object({ code: Str(64), message: Str(2048) })),
});

const BrowseEntrySchema = Type.Object({
  name: Str(4096),
  type: Type.Union([Type.Literal("file"), Type.Literal("directory"), Type.Literal("symlink"), Type.Literal("other")]),
  size: Type.Number({ minimum: 0 }),
  modifiedAt: Str(64),
});

export const BrowseListingSchema = Type.Object(
  {
    path: Type.String({ maxLength: 4096, description: "The real path listed." }),
    entries: Type.Array(BrowseEntrySchema),
    truncated: Type.Boolean({ description: "More entries than browse.maxDirEntries." }),
  },
  { title: "BrowseListing" },
);

export const BrowseSampleSchema = Type.Object(
  {
    path: Type.String({ maxLength: 4096 }),
    mode: Type.Union([Type.Literal("lines"), Type.Literal("bytes")]),
    from: Type.Union([Type.Literal("head"), Type.Literal("tail")]),
    size: Type.Number({ minimum: 0, description: "File size in bytes." }),
    binary: Type.Boolean({ description: "The sample looks binary; content is then empty." }),
    content: Type.String(),
    lines: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean({ description: "The file holds more than the sample." }),
  },
  { title: "BrowseSample" },
);

/** The agent's answer to `discovery.rescan`: whether the new report differs from the last one. */
export const RescanResultSchema = Type.Object({ changed: Type.Boolean() });

export type Hello = Static<typeof HelloSchema>;
export type AgentResponse = Static<typeof ResponseSchema>;

// The wire schemas and the agent's own types must describe the same shapes.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameHost: Same<Static<typeof HostFactsSchema>, HostFacts> = true;
const sameReport: Same<Static<typeof DiscoveryReportSchema>, DiscoveryReport> = true;
const sameListing: Same<Static<typeof BrowseListingSchema>, BrowseListing> = true;
const sameSample: Same<Static<typeof BrowseSampleSchema>, BrowseSample> = true;
void sameHost;
void sameReport;
void sameListing;
void sameSample;
