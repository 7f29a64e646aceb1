import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { agentConfigFile, bootstrapFiles, collectorUrl, installSnippet } from "./bootstrap.ts";

const url = collectorUrl("https://svc.example.com");

function yamlOf(files: { path: string; body: string }[], path: string): Record<string, any> {
  return parse(files.find((f) => f.path === path)!.body);
}

describe("collector URL", () => {
  test("unset is 409 external_url_missing, saying how to set it", () => {
    expect(() => collectorUrl("")).toThrow(
      expect.objectContaining({ status: 409, code: "external_url_missing", message: expect.stringMatching(/externalUrl.*SVC_EXTERNALURL.*EXTERNAL_URL/) }),
    );
  });

  test("plain http only on loopback", () => {
    for (const ok of ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "https://10.0.0.5"]) expect(collectorUrl(ok).href).toStartWith(ok);
    expect(() => collectorUrl("http://10.0.0.5:8080")).toThrow(expect.objectContaining({ code: "external_url_insecure" }));
  });
});

describe("install snippet", () => {
  test("fetches install.sh from the server's /downloads/ and passes the endpoint, tokens and mode", () => {
    expect(installSnippet(url, { collector: { mode: "opamp", token: "svcen_abc" } })).toBe(
      "curl -fsSL https://svc.example.com/downloads/install.sh | sudo sh -s -- --endpoint https://svc.example.com --token svcen_abc --mode opamp",
    );
    expect(installSnippet(url, { collector: { mode: "rcfg-remotecfg", token: "svcct_abc", collectorId: "0190c3c0-0000-7000-8000-000000000000" } })).toEndWith(
      "--mode rcfg-remotecfg --collector-id 0190c3c0-0000-7000-8000-000000000000",
    );
    expect(installSnippet(url, { agentToken: "svcen_agent" })).toEndWith("-- --endpoint https://svc.example.com --agent-token svcen_agent");
    expect(installSnippet(url, { collector: { mode: "opamp", token: "svcen_abc" }, packageBaseUrl: "https://svc.example.com/downloads/collectors" })).toEndWith(
      "--token svcen_abc --mode opamp --package-base-url https://svc.example.com/downloads/collectors",
    );
    // The mirror is for collector packages: an agent-only snippet does not name it.
    expect(installSnippet(url, { agentToken: "svcen_agent", packageBaseUrl: "https://svc.example.com/downloads/collectors" })).not.toContain(
      "--package-base-url",
    );
    expect(installSnippet(url, { agentToken: "svcen_a", collector: { mode: "opamp", token: "svcen_c" } })).toEndWith(
      "--agent-token svcen_a --token svcen_c --mode opamp",
    );
  });

  test("quotes anything the shell would read as more than one word", () => {
    expect(installSnippet(url, { collector: { mode: "opamp", token: "svcen_abc", collectorId: "it's; rm -rf /" } })).toEndWith(
      `--collector-id 'it'\\''s; rm -rf /'`,
    );
  });
});

describe("agent config", () => {
  test("carries the server URL, the token and the environment, quoted, and nothing the agent would refuse", () => {
    const file = agentConfigFile(url, 'svcen_x"\nextra: 1', "prod: eu");
    expect(file.path).toBe("/etc/svc/config.yaml");
    expect(parse(file.body)).toEqual({
      server: { url: "https://svc.example.com", token: 'svcen_x"\nextra: 1' },
      agent: { environment: "prod: eu" },
      browse: { enabled: true, allowedRoots: ["/var/log", "/var/lib/docker/containers", "/opt"] },
      logging: { level: "info" },
    });
  });
});

describe("bootstrap files", () => {
  test("otelcol: the collector config connects over wss with the token, two capabilities and a no-op pipeline", () => {
    const files = bootstrapFiles("otelcol", url, "c-1", "svcen_abc");
    expect(files.map((f) => [f.path, f.contentType])).toEqual([
      ["/etc/otel-collector/config.yaml", "text/yaml"],
      ["/etc/opampsupervisor/config.yaml", "text/yaml"],
    ]);
    const config = yamlOf(files, "/etc/otel-collector/config.yaml");
    expect(config.extensions.opamp.server.ws).toEqual({ endpoint: "wss://svc.example.com/v1/opamp", headers: { Authorization: "Bearer svcen_abc" } });
    expect(config.extensions.opamp.capabilities).toEqual({ reports_effective_config: true, reports_health: true });
    expect(config.service.extensions).toEqual(["opamp"]);
    expect(Object.keys(config.receivers)).toEqual(["nop"]);
    expect(Object.keys(config.exporters)).toEqual(["nop"]);
    expect(config.service.pipelines).toEqual({ metrics: { receivers: ["nop"], exporters: ["nop"] } });
  });

  test("otelcol: the supervisor config holds the same connection and the supervisor's capabilities", () => {
    const supervisor = yamlOf(bootstrapFiles("otelcol", url, "c-1", "svcen_abc"), "/etc/opampsupervisor/config.yaml");
    expect(supervisor.server).toEqual({ endpoint: "wss://svc.example.com/v1/opamp", headers: { Authorization: "Bearer svcen_abc" } });
    expect(supervisor.capabilities).toEqual({
      accepts_remote_config: true,
      reports_effective_config: true,
      reports_own_metrics: true,
      reports_health: true,
      reports_remote_config: true,
      reports_available_components: true,
      accepts_restart_command: true,
    });
    expect(supervisor.agent.executable).toBeString();
    // Only the supervisor's own parts: the collector file's OpAMP extension would carry the token into the merged config.
    expect(supervisor.agent.config_files).toEqual(["$OWN_TELEMETRY_CONFIG", "$OPAMP_EXTENSION_CONFIG", "$REMOTE_CONFIG"]);
    expect(supervisor.storage.directory).toBeString();
  });

  test("otelcol: ws:// for a loopback http server, port kept", () => {
    const config = yamlOf(bootstrapFiles("otelcol", collectorUrl("http://127.0.0.1:8080"), "c-1", "t"), "/etc/otel-collector/config.yaml");
    expect(config.extensions.opamp.server.ws.endpoint).toBe("ws://127.0.0.1:8080/v1/opamp");
  });

  test("alloy: remotecfg with the collector id and token, and an own-metrics push to the server with the same token", () => {
    const [file, ...rest] = bootstrapFiles("alloy", url, "c-1", "svcct_abc");
    expect(rest).toEqual([]);
    expect(file!.path).toBe("/etc/rcfg-runtime/config.rcfg");
    const body = file!.body;
    const remotecfg = /^remotecfg \{\n([^}]*)\n\}/m.exec(body)![1]!;
    expect(remotecfg.split("\n").map((line) => line.trim().split(/\s*=\s*/))).toEqual([
      ["url", '"https://svc.example.com"'],
      ["id", '"c-1"'],
      ["bearer_token", '"svcct_abc"'],
      ["poll_frequency", '"1m"'],
    ]);
    for (const component of ["prometheus.exporter.self", "prometheus.scrape", "otelcol.receiver.prometheus", "otelcol.exporter.otlphttp"]) {
      expect(body).toMatch(new RegExp(`^${component.replaceAll(".", "\\.")} "\\w+" \\{`, "m"));
    }
    expect(body).toContain('endpoint = "https://svc.example.com"\n');
    expect(body).toContain('"Authorization" = "Bearer svcct_abc",');
    expect(body).not.toContain("{{");
    expect((body.match(/\{/g) ?? []).length).toBe((body.match(/\}/g) ?? []).length);
  });

  test("values are quoted for their format, so none can break out of its string", () => {
    const alloy = bootstrapFiles("alloy", url, 'c"1\n}', "svcct_abc")[0]!.body;
    expect(alloy).toContain('id             = "c\\"1\\n}"');
    const config = yamlOf(bootstrapFiles("otelcol", url, "c-1", 'x"\nextra: 1 #'), "/etc/otel-collector/config.yaml");
    expect(config.extensions.opamp.server.ws.headers.Authorization).toBe('Bearer x"\nextra: 1 #');
    expect(config.extra).toBeUndefined();
  });
});
