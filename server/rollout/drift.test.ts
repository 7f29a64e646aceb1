import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configDrift, type EffectiveFile } from "./drift.ts";

/*
 * Fixtures (testdata/drift/), one target and what a collector running it
 * would report, each modelled on upstream (sources in drift.ts's header):
 *
 * - target.yaml: svc's rendering (server/render/otelcol.ts): strings
 *   double-quoted, `$` written `$$`, a secret as its marker, a header from
 *   the host's environment as `${env:…}`.
 * - effective-collector.yaml: what the opamp extension reports through the
 *   supervisor, core ≥ v0.139: `yaml.Marshal` of the marshaled typed config
 *   (yaml.v3: keys sorted, four-space indent, plain scalars), every default
 *   filled in (confighttp/configgrpc client, exporterhelper queue and retry,
 *   batch, filelog; a subset of them), `configopaque` values `[REDACTED]`,
 *   headers as `{name, value}` pairs, `${env:…}` expanded, `$$` unescaped,
 *   durations as Go writes them (`60s` → `1m0s`); beside svc's config the
 *   supervisor's opamp extension, own telemetry and log settings, and the
 *   `nop` `metrics` pipeline of svc's bootstrap file. The scalar style was
 *   checked by marshaling such a map (time.Duration values, `[REDACTED]`
 *   pairs, a `$` in OTTL) with Debian's gopkg.in/yaml.v3, the code the
 *   collector's go.yaml.in/yaml/v3 continues: `1m0s`, `1m30s`,
 *   `value: '[REDACTED]'`, `- IsMatch(body, "probe$")`, keys sorted.
 * - effective-supervisor.yaml: what the supervisor reports before the
 *   collector has (`createEffectiveConfigMsg` falling back to its merged
 *   config): the files merged unexpanded, secrets in plaintext (svc's
 *   redaction has turned the vault's back into markers, as
 *   `TargetDelivery.setEffective` stores it; tokens it does not know stay).
 */
const dir = join(import.meta.dir, "testdata", "drift");
const fixture = (name: string) => readFileSync(join(dir, name), "utf8");
const target = fixture("target.yaml");
const collector = fixture("effective-collector.yaml");
const supervisor = fixture("effective-supervisor.yaml");

/** As the OpAMP handler stores it: one file named "" (contrib opampextension composeEffectiveConfig). */
const reported = (body: string, contentType = "text/yaml"): EffectiveFile[] => [{ name: "", contentType, body }];

/** The diff's changed lines, without its headers. */
const changes = (diff: string | null) => (diff ?? "").split("\n").filter((l) => /^[-+](?![-+]{2} )/.test(l));

describe("otelcol", () => {
  test("the target reported back as is is not drift", () => {
    expect(configDrift("otelcol", target, reported(target))).toEqual({ drifted: false, diff: null });
  });

  test("what the collector reports for the target is not drift: defaults, redaction, pairs, expansion, durations, supervisor additions", () => {
    expect(configDrift("otelcol", target, reported(collector))).toEqual({ drifted: false, diff: null });
  });

  test("the supervisor's own merged config, before the collector reports, is not drift", () => {
    expect(configDrift("otelcol", target, reported(supervisor, ""))).toEqual({ drifted: false, diff: null });
  });

  test("reformatted and reordered is not drift: flow style, other quoting, keys and pipeline members in another order", () => {
    const reformatted = [
      "service: {pipelines: {traces/apps: {exporters: [otlp/gateway], receivers: [otlp/apps]},",
      "  logs/app_files: {exporters: ['otlp/gateway', 'otlphttp/backend'], receivers: [filelog/app_files],",
      "    processors: [filter/app_files_drop_probes, batch/app_files]}}}",
      "exporters:",
      "  otlp/gateway: {tls: {insecure: true}, endpoint: 'gateway:4317'}",
      "  otlphttp/backend:",
      "    headers: {X-Tenant: 'team$$blue', X-Api-Key: '${env:BACKEND_API_KEY}', Authorization: '<secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d11>'}",
      "    endpoint: https://otlp.example.com",
      "processors:",
      "  batch/app_files: {send_batch_size: 8192, timeout: 1m}",
      "  filter/app_files_drop_probes: {logs: {log_record: ['IsMatch(body, \"probe$$\")']}, error_mode: ignore}",
      "receivers:",
      "  otlp/apps: {protocols: {http: {endpoint: 'localhost:4318'}, grpc: {endpoint: 'localhost:4317'}}}",
      "  filelog/app_files: {start_at: beginning, include: [/opt/app/logs/*.log]}",
    ].join("\n");
    expect(configDrift("otelcol", target, reported(reformatted))).toEqual({ drifted: false, diff: null });
  });

  test("a changed exporter endpoint is drift, and the diff shows it", () => {
    const changed = collector.replace("endpoint: gateway:4317", "endpoint: rogue.example.net:4317");
    const drift = configDrift("otelcol", target, reported(changed));
    expect(drift.drifted).toBe(true);
    expect(drift.reason).toBe("exporters.otlp/gateway.endpoint differs");
    expect(changes(drift.diff)).toEqual(["-    endpoint: gateway:4317", "+    endpoint: rogue.example.net:4317"]);
    expect(drift.diff).toStartWith("--- target\n+++ effective\n");
  });

  test("an endpoint the target's is a prefix of is drift: gateway:4317 → gateway:43170", () => {
    const longer = collector.replace("endpoint: gateway:4317", "endpoint: gateway:43170");
    expect(longer).not.toBe(collector);
    const drift = configDrift("otelcol", target, reported(longer));
    expect(drift.drifted).toBe(true);
    expect(drift.reason).toBe("exporters.otlp/gateway.endpoint differs");
    expect(changes(drift.diff)).toEqual(["-    endpoint: gateway:4317", "+    endpoint: gateway:43170"]);
  });

  test("a removed pipeline is drift, and the diff shows it gone", () => {
    const removed = collector.replace(/ {8}traces\/apps:\n(?: {12}.*\n)+/, "");
    expect(removed).not.toContain("traces/apps");
    const drift = configDrift("otelcol", target, reported(removed));
    expect(drift.drifted).toBe(true);
    expect(drift.reason).toBe("service.pipelines.traces/apps missing");
    expect(changes(drift.diff)).toEqual(["-    traces/apps:", "-      exporters:", "-        - otlp/gateway", "-      receivers:", "-        - otlp/apps"]);
  });

  test("a pipeline svc did not deliver is drift; the supervisor's and the bootstrap's idle ones are not", () => {
    const extra = collector.replace(
      "        traces/apps:\n",
      "        logs/local:\n            exporters:\n                - otlp/gateway\n            receivers:\n                - filelog/app_files\n        traces/apps:\n",
    );
    const drift = configDrift("otelcol", target, reported(extra));
    expect(drift.drifted).toBe(true);
    expect(drift.reason).toBe("service.pipelines.logs/local not in the target");
    expect(changes(drift.diff)).toContain("+    logs/local:");

    const ownMetrics = collector.replace(
      "        traces/apps:\n",
      "        metrics/own_metrics:\n            exporters:\n                - otlphttp/own_metrics\n            receivers:\n                - prometheus/own_metrics\n        traces/apps:\n",
    );
    expect(configDrift("otelcol", target, reported(ownMetrics)).drifted).toBe(false);
  });

  test("a receiver added to a pipeline, or processors run in another order, is drift", () => {
    const added = collector.replace("                - otlp/apps\n", "                - otlp/apps\n                - nop\n");
    expect(configDrift("otelcol", target, reported(added))).toMatchObject({ drifted: true, reason: "service.pipelines.traces/apps.receivers differs" });

    const swapped = collector.replace(
      "                - filter/app_files_drop_probes\n                - batch/app_files\n",
      "                - batch/app_files\n                - filter/app_files_drop_probes\n",
    );
    expect(configDrift("otelcol", target, reported(swapped))).toMatchObject({ drifted: true, reason: "service.pipelines.logs/app_files.processors differs" });
  });

  test("values the collector redacts are unknown, so equal: pairs, a map of them, or every scalar (opampextension v0.102–v0.104)", () => {
    const legacyHeaders = collector.replace(
      /headers:\n {12}- name: Authorization\n[\s\S]*?value: '\[REDACTED\]'\n {8}http2/,
      "headers:\n            Authorization: '[REDACTED]'\n            X-Api-Key: '[REDACTED]'\n            X-Tenant: '[REDACTED]'\n        http2",
    );
    expect(legacyHeaders).toContain("X-Tenant: '[REDACTED]'");
    expect(configDrift("otelcol", target, reported(legacyHeaders)).drifted).toBe(false);

    // Then headers were a map, so only values are redacted: every scalar a key holds.
    const allRedacted = legacyHeaders.replace(/^( *(?!- name:)[^\n]*?): (?!\[|\{)[^\n]+$/gm, "$1: '[REDACTED]'");
    expect(allRedacted).toContain("endpoint: '[REDACTED]'");
    expect(configDrift("otelcol", target, reported(allRedacted)).drifted).toBe(false);
  });

  test("but a header the collector no longer sends is drift", () => {
    const dropped = collector.replace("            - name: X-Tenant\n              value: '[REDACTED]'\n", "");
    expect(configDrift("otelcol", target, reported(dropped))).toMatchObject({ drifted: true, reason: "exporters.otlphttp/backend.headers.X-Tenant missing" });
  });

  test("secret markers: the same one is not drift, another one is, and the diff shows markers only", () => {
    expect(configDrift("otelcol", target, reported(supervisor)).drifted).toBe(false);
    const other = supervisor.replace("<secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d11>", "<secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d99>");
    const drift = configDrift("otelcol", target, reported(other));
    expect(drift).toMatchObject({ drifted: true, reason: "exporters.otlphttp/backend.headers.Authorization differs" });
    expect(changes(drift.diff)).toEqual([
      "-      Authorization: <secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d11>",
      "+      Authorization: <secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d99>",
    ]);
  });

  test("`${env:…}` matches whatever it expanded to, `$$` only a single `$`", () => {
    const expandedTo = (value: string) =>
      collector.replace("- name: X-Tenant\n              value: '[REDACTED]'", `- name: X-Tenant\n              value: '${value}'`);
    expect(configDrift("otelcol", target, reported(expandedTo("team$blue"))).drifted).toBe(false);
    expect(configDrift("otelcol", target, reported(expandedTo("team$$blue"))).drifted).toBe(false);
    expect(configDrift("otelcol", target, reported(expandedTo("team-blue"))).drifted).toBe(true);

    const withEnv = target.replace('endpoint: "https://otlp.example.com"', 'endpoint: "https://${env:BACKEND_HOST}/otlp"');
    expect(
      configDrift("otelcol", withEnv, reported(collector.replace("endpoint: https://otlp.example.com", "endpoint: https://otlp.internal/otlp"))).drifted,
    ).toBe(false);
    expect(
      configDrift("otelcol", withEnv, reported(collector.replace("endpoint: https://otlp.example.com", "endpoint: http://otlp.internal/otlp"))).drifted,
    ).toBe(true);
  });

  test("durations compare by length, numbers by value; a changed one is drift", () => {
    expect(configDrift("otelcol", target, reported(collector.replace("timeout: 1m0s", "timeout: 60000000000"))).drifted).toBe(false);
    expect(configDrift("otelcol", target, reported(collector.replace("timeout: 1m0s", "timeout: 1m30s")))).toMatchObject({
      drifted: true,
      reason: "processors.batch/app_files.timeout differs",
    });
    expect(configDrift("otelcol", target, reported(collector.replace("send_batch_size: 8192", "send_batch_size: 8192.0"))).drifted).toBe(false);
    expect(configDrift("otelcol", target, reported(collector.replace("send_batch_size: 8192", "send_batch_size: 512"))).drifted).toBe(true);
  });

  test("an empty value the collector omits is not drift; a setting it dropped is", () => {
    const withEmpty = target.replace('start_at: "beginning"', 'start_at: "beginning"\n    exclude: []\n    storage: ""');
    expect(configDrift("otelcol", withEmpty, reported(collector)).drifted).toBe(false);
    const dropped = collector.replace("        start_at: beginning\n", "");
    expect(configDrift("otelcol", target, reported(dropped))).toMatchObject({ drifted: true, reason: "receivers.filelog/app_files.start_at missing" });
  });

  test("settings the supervisor owns are never compared; extensions it appends are not drift", () => {
    const withTelemetry = target.replace("service:\n", 'service:\n  telemetry:\n    logs:\n      encoding: "console"\n');
    expect(configDrift("otelcol", withTelemetry, reported(collector)).drifted).toBe(false);

    const withExtension = target.replace(
      "service:\n",
      'extensions:\n  file_storage/queue:\n    directory: "/var/lib/otelcol"\nservice:\n  extensions:\n    - "file_storage/queue"\n',
    );
    const running = collector
      .replace("extensions:\n    opamp:\n", "extensions:\n    file_storage/queue:\n        directory: /var/lib/otelcol\n    opamp:\n")
      .replace("    extensions:\n        - opamp\n", "    extensions:\n        - file_storage/queue\n        - opamp\n");
    expect(configDrift("otelcol", withExtension, reported(running)).drifted).toBe(false);
    expect(configDrift("otelcol", withExtension, reported(collector))).toMatchObject({
      drifted: true,
      reason: "extensions.file_storage/queue missing; service.extensions differs",
    });
  });

  test("a report built to blow up on aliases is refused, not expanded", () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(", ")}]`,
      ),
    ].join("\n");
    expect(configDrift("otelcol", target, reported(bomb))).toMatchObject({
      drifted: false,
      reason: "the effective config is not YAML this comparison can read",
    });
  });

  test("the idle target is what the collector runs on its nop pipeline", () => {
    const idle = [
      "receivers:",
      "  nop: {}",
      "exporters:",
      "  nop: {}",
      "service:",
      "  pipelines:",
      "    logs/idle:",
      "      receivers:",
      '        - "nop"',
      "      exporters:",
      '        - "nop"',
    ].join("\n");
    const running =
      "exporters:\n    nop: null\nreceivers:\n    nop: null\nservice:\n    pipelines:\n        logs/idle:\n            exporters: [nop]\n            receivers: [nop]\n        metrics:\n            exporters: [nop]\n            receivers: [nop]\n";
    expect(configDrift("otelcol", idle, reported(running))).toEqual({ drifted: false, diff: null });
  });

  test("many differences: the reason names five and counts the rest", () => {
    const drift = configDrift("otelcol", target, reported("receivers: {}\nexporters: {}\n"));
    expect(drift.drifted).toBe(true);
    expect(drift.reason).toMatch(/^receivers\.otlp\/apps missing; .*; and \d+ more$/);
  });

  test("the file is chosen as the supervisor forwards it; nothing to compare is said, not guessed", () => {
    const files: EffectiveFile[] = [
      { name: "raw", contentType: "text/yaml", body: "receivers: {}\n" },
      { name: "", contentType: "text/yaml", body: collector },
    ];
    expect(configDrift("otelcol", target, files).drifted).toBe(false);
    expect(configDrift("otelcol", target, [{ name: "config.yaml", contentType: "", body: collector }]).drifted).toBe(false);
    expect(configDrift("otelcol", target, [])).toEqual({ drifted: false, diff: null, reason: "the collector reported no effective config" });
    expect(configDrift("otelcol", target, reported("  \n"))).toEqual({ drifted: false, diff: null, reason: "the collector reported no effective config" });
    expect(configDrift("otelcol", target, reported("exporters: [unclosed\n"))).toEqual({
      drifted: false,
      diff: null,
      reason: "the effective config is not YAML this comparison can read",
    });
  });
});

describe("alloy", () => {
  // Alloy's remotecfg reports the body it last loaded, byte for byte (grafana/alloy
  // internal/service/remotecfg/config_manager.go setEffectiveConfig), as svc delivered
  // it: secrets in plaintext, which setEffective's redaction turns back into markers.
  const alloyTarget = readFileSync(join(import.meta.dir, "..", "render", "testdata", "secrets", "config.alloy"), "utf8");
  const asReported = (body: string): EffectiveFile[] => [{ name: "", contentType: "text/plain", body }];

  test("the delivered body reported back is not drift; nor is it with other line endings, alignment or comments", () => {
    expect(configDrift("alloy", alloyTarget, asReported(alloyTarget))).toEqual({ drifted: false, diff: null });
    const reformatted = ("// a note\n\n" + alloyTarget.replaceAll("\t", "  ").replaceAll(" = ", "   =   ")).replaceAll("\n", "\r\n");
    expect(configDrift("alloy", alloyTarget, asReported(reformatted))).toEqual({ drifted: false, diff: null });
  });

  test("a changed endpoint is drift, and whitespace inside a string counts", () => {
    const changed = alloyTarget.replace('"http://loki:3100/otlp"', '"http://rogue:3100/otlp"');
    const drift = configDrift("alloy", alloyTarget, asReported(changed));
    expect(drift.drifted).toBe(true);
    expect(changes(drift.diff)).toEqual(['-endpoint = "http://loki:3100/otlp"', '+endpoint = "http://rogue:3100/otlp"']);
    const spaced = alloyTarget.replace('"X-Scope-OrgID" = "archive"', '"X-Scope-OrgID" = "arch  ive"');
    expect(configDrift("alloy", alloyTarget, asReported(spaced)).drifted).toBe(true);
  });

  test("another secret marker is drift", () => {
    const other = alloyTarget.replace("<secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d14>", "<secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d99>");
    expect(configDrift("alloy", alloyTarget, asReported(other)).drifted).toBe(true);
  });

  test("an Alloy older than v1.12.0 reports nothing: said so, not drift", () => {
    expect(configDrift("alloy", alloyTarget, [])).toEqual({ drifted: false, diff: null, reason: "the collector reported no effective config" });
  });
});
