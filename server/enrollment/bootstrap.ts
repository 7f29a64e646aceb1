/**
 * What an operator runs or writes on a collector host to enroll it: the
 * install one-liner, the agent config and the bootstrap files of both runtimes. They carry only
 * the way back to svc (its URL and a token); the pipeline arrives over OpAMP or remote
 * config. Templates are files in installer/templates/ with `{{name}}`
 * placeholders, each value quoted for its format; the text imports embed
 * them in the compiled binary.
 */
import { stringify } from "yaml";
import agentTemplate from "../../installer/templates/agent-config.yaml" with { type: "text" };
import alloyTemplate from "../../installer/templates/alloy-bootstrap.alloy" with { type: "text" };
import otelcolTemplate from "../../installer/templates/otelcol-bootstrap.yaml" with { type: "text" };
import supervisorTemplate from "../../installer/templates/supervisor.yaml" with { type: "text" };
import { ConflictError } from "../errors.ts";
import { quoteAlloy } from "../catalog/alloy-syntax.ts";
import type { BootstrapFile } from "../../shared/enrollment.ts";
import type { ManagementMode, Runtime } from "../../shared/vocabulary.ts";

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * The public URL collectors are given, from `externalUrl`. Refused (409) when
 * it is unset, and when it is plain http off loopback: collectors send their
 * token to it, and OpAMP allows ws:// on loopback only (docs/architecture.md "OpAMP").
 */
export function collectorUrl(externalUrl: string): URL {
  if (externalUrl === "") {
    throw new ConflictError(
      "Collectors need this server's public URL, and none is configured: set externalUrl in config.yaml (or SVC_EXTERNALURL / EXTERNAL_URL) and restart.",
      "external_url_missing",
    );
  }
  const url = new URL(externalUrl);
  if (url.protocol === "http:" && !LOOPBACK.test(url.hostname)) {
    throw new ConflictError(
      `externalUrl ${externalUrl} is plain http on a network address; collectors would send their token unencrypted. Serve https (tls.certFile or a TLS front door) and set externalUrl to the https URL.`,
      "external_url_insecure",
    );
  }
  return url;
}

/** A POSIX shell word: bare when it is plainly safe, else single-quoted. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** What one install snippet sets up: the agent, a collector's bootstrap files, or both. */
export interface SnippetParts {
  /** An agent enrollment token: install svc-agent and enroll it. */
  agentToken?: string;
  /** Write this collector's bootstrap files (an opamp enrollment token, or the rcfg collector's own token). */
  collector?: { mode: ManagementMode; token: string; collectorId?: string };
  /** Where install.sh takes the collector packages from, when not the upstream releases (a mirror in downloads.dir). */
  packageBaseUrl?: string;
}

/** The one-liner that fetches install.sh from this server's /downloads/ and runs it with the endpoint and tokens. */
export function installSnippet(url: URL, parts: SnippetParts): string {
  const args = ["--endpoint", url.origin];
  if (parts.agentToken !== undefined) args.push("--agent-token", parts.agentToken);
  if (parts.collector) {
    const { mode, token, collectorId } = parts.collector;
    args.push("--token", token, "--mode", mode);
    if (collectorId !== undefined) args.push("--collector-id", collectorId);
    if (parts.packageBaseUrl !== undefined) args.push("--package-base-url", parts.packageBaseUrl);
  }
  return `curl -fsSL ${shellQuote(`${url.origin}/downloads/install.sh`)} | sudo sh -s -- ${args.map(shellQuote).join(" ")}`;
}

/** A YAML double-quoted scalar, never folded. */
function quoteYaml(text: string): string {
  return stringify(text, { defaultStringType: "QUOTE_DOUBLE", lineWidth: 0 }).trimEnd();
}

function fill(template: string, values: Record<string, string>, quote: (text: string) => string): string {
  return template.replaceAll(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`bootstrap template placeholder {{${name}}} has no value`);
    return quote(value);
  });
}

/**
 * The bootstrap files for one collector. otelcol: the collector's own config
 * and the OpAMP supervisor's, both carrying `token` (an opamp enrollment
 * token). alloy: the Runtime R file carrying `token` (the per-collector token)
 * for remote config and the own-metrics push.
 */
export function bootstrapFiles(runtime: Runtime, url: URL, collectorId: string, token: string): BootstrapFile[] {
  const authorization = `Bearer ${token}`;
  if (runtime === "alloy") {
    const body = fill(alloyTemplate, { url: url.origin, collectorId, token, authorization }, quoteAlloy);
    return [{ path: "/etc/rcfg-runtime/config.rcfg", contentType: "text/plain", body }];
  }
  const values = { opampEndpoint: `${url.protocol === "https:" ? "wss" : "ws"}://${url.host}/v1/opamp`, authorization };
  return [
    { path: "/etc/otel-collector/config.yaml", contentType: "text/yaml", body: fill(otelcolTemplate, values, quoteYaml) },
    { path: "/etc/opampsupervisor/config.yaml", contentType: "text/yaml", body: fill(supervisorTemplate, values, quoteYaml) },
  ];
}

/** The svc-agent config for a host enrolling with an agent token (its path on a VM). */
export function agentConfigFile(url: URL, token: string, environment: string): BootstrapFile {
  const body = fill(agentTemplate, { serverUrl: url.origin, token, environment }, quoteYaml);
  return { path: "/etc/svc/config.yaml", contentType: "text/yaml", body };
}
