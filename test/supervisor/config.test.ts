/**
 * The supervisor.yaml svc renders, checked against the upstream supervisor's
 * config keys, types and Validate() rules (upstream-config.json), and wired
 * so that only the supervisor holds the token: the collector file, whose
 * OpAMP extension carries it, is not among the files merged into the
 * collector's config.
 */
import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { bootstrapFiles } from "../../server/enrollment/bootstrap.ts";
import { AgentCapabilities } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { configFileOrder, supervisorCapabilities, supervisorConfigProblems } from "./config.ts";

const COLLECTOR_FILE = "/etc/otel-collector/config.yaml";
const files = bootstrapFiles("otelcol", new URL("https://svc.example.com"), "c-1", "svcen_abc");
const body = (path: string) => files.find((f) => f.path === path)!.body;
const supervisor = parse(body("/etc/opampsupervisor/config.yaml")) as Record<string, unknown>;
const collector = parse(body(COLLECTOR_FILE)) as Record<string, any>;

describe("the rendered supervisor.yaml against upstream's config.go", () => {
  test("every key is known, of the right type, the required ones present, and every Validate() rule holds", () => {
    expect(supervisorConfigProblems(supervisor)).toEqual([]);
  });

  test("the check fails on what upstream refuses", () => {
    const broken = (patch: (doc: any) => void) => {
      const doc = structuredClone(supervisor) as any;
      patch(doc);
      return supervisorConfigProblems(doc);
    };
    expect(broken((d) => (d.agent.config_file = [COLLECTOR_FILE]))).toEqual(["agent.config_file: unknown key"]);
    expect(broken((d) => (d.capabilities.accepts_remote_config = "yes"))).toEqual(["capabilities.accepts_remote_config: must be true or false"]);
    expect(broken((d) => delete d.agent.executable)).toEqual(["agent.executable: required"]);
    expect(broken((d) => (d.server.endpoint = "tcp://svc:1"))).toEqual(["server.endpoint: must be an http, https, ws or wss URL"]);
    expect(broken((d) => (d.agent.config_files = ["$REMOTE"]))).toEqual([expect.stringContaining("agent.config_files: has $REMOTE")]);
    expect(broken((d) => (d.agent.bootstrap_timeout = "0s"))).toEqual(["agent.bootstrap_timeout: must be positive"]);
    expect(broken((d) => (d.agent.bootstrap_timeout = "3 seconds"))).toEqual(["agent.bootstrap_timeout: must be a Go duration such as 5s"]);
  });

  test("no file that carries the token is merged: the supervisor's OpAMP extension and svc's remote config make the collector's config", () => {
    const order = configFileOrder(supervisor);
    expect(order).toEqual(["$OWN_TELEMETRY_CONFIG", "$OPAMP_EXTENSION_CONFIG", "$REMOTE_CONFIG"]);
    // The collector file holds the token in its OpAMP extension headers, which the supervisor's extension settings do not replace.
    expect(collector.extensions.opamp.server.ws.headers.Authorization).toBe("Bearer svcen_abc");
    expect(order).not.toContain(COLLECTOR_FILE);
    // Upstream's own placement, for a file given alone, agrees.
    expect(configFileOrder({ agent: { config_files: [COLLECTOR_FILE] } })).toEqual([
      "$OWN_TELEMETRY_CONFIG",
      COLLECTOR_FILE,
      "$OPAMP_EXTENSION_CONFIG",
      "$REMOTE_CONFIG",
    ]);
  });

  test("the supervisor reports the capabilities svc needs to push config and own-metrics settings", () => {
    const caps = supervisorCapabilities(supervisor);
    for (const cap of [
      AgentCapabilities.AgentCapabilities_ReportsStatus,
      AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig,
      AgentCapabilities.AgentCapabilities_ReportsRemoteConfig,
      AgentCapabilities.AgentCapabilities_ReportsEffectiveConfig,
      AgentCapabilities.AgentCapabilities_ReportsOwnMetrics,
      AgentCapabilities.AgentCapabilities_ReportsHealth,
      AgentCapabilities.AgentCapabilities_ReportsHeartbeat,
      AgentCapabilities.AgentCapabilities_ReportsAvailableComponents,
      AgentCapabilities.AgentCapabilities_AcceptsRestartCommand,
    ]) {
      expect(caps & BigInt(cap), AgentCapabilities[cap]).toBe(BigInt(cap));
    }
    expect(caps & BigInt(AgentCapabilities.AgentCapabilities_AcceptsOpAMPConnectionSettings)).toBe(0n);
  });

  test("the collector file keeps to the two capability keys the spec allows, on a no-op pipeline", () => {
    expect(Object.keys(collector.extensions.opamp.capabilities).sort()).toEqual(["reports_effective_config", "reports_health"]);
    expect(collector.service.pipelines.metrics).toEqual({ receivers: ["nop"], exporters: ["nop"] });
  });
});
