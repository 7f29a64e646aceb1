/**
 * Checks an OpAMP supervisor config file against the upstream table in
 * upstream-config.json (keys, types, required keys, Validate() rules) and
 * derives what upstream derives from it: the agent capabilities the
 * supervisor reports and the order config_files are merged in.
 */
import { parseGoDuration } from "../../server/catalog/durations.ts";
import { AgentCapabilities } from "../../server/gen/opamp/v1/opamp_pb.ts";
import table from "./upstream-config.json" with { type: "json" };

interface KeySpec {
  type: string;
  required?: boolean;
  default?: unknown;
  rule?: string;
  agentCapability?: string;
}

export const SUPERVISOR_KEYS = table.keys as Record<string, KeySpec>;
export const SPECIAL_CONFIG_FILES: readonly string[] = table.specialConfigFiles;

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function typeProblem(type: string, value: unknown): string | undefined {
  switch (type) {
    case "section":
    case "object":
      return isMap(value) ? undefined : "must be a mapping";
    case "string":
      return typeof value === "string" ? undefined : "must be a string";
    case "bool":
      return typeof value === "boolean" ? undefined : "must be true or false";
    case "int":
      return Number.isInteger(value) ? undefined : "must be a whole number";
    case "duration":
      return typeof value === "string" && parseGoDuration(value) !== null ? undefined : "must be a Go duration such as 5s";
    case "list<string>":
      return Array.isArray(value) && value.every((v) => typeof v === "string") ? undefined : "must be a list of strings";
    case "map<string,string>":
      return isMap(value) && Object.values(value).every((v) => typeof v === "string") ? undefined : "must map strings to strings";
    case "header":
      return isMap(value) && Object.values(value).every((v) => typeof v === "string" || (Array.isArray(v) && v.every((s) => typeof s === "string")))
        ? undefined
        : "must map header names to a string or a list of strings";
  }
  return `has unknown type ${type} in the table`;
}

/** The rules of upstream's Validate() for the keys that have them. */
function ruleProblem(path: string, value: unknown): string | undefined {
  switch (path) {
    case "server.endpoint": {
      const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value as string)?.[1]?.toLowerCase();
      return scheme && ["http", "https", "ws", "wss"].includes(scheme) ? undefined : "must be an http, https, ws or wss URL";
    }
    case "agent.orphan_detection_interval":
    case "agent.config_apply_timeout":
    case "agent.bootstrap_timeout":
      return /^0+(\.0+)?[a-zµ]+$/.test(value as string) ? "must be positive" : undefined;
    case "agent.opamp_server_port":
      return (value as number) >= 0 && (value as number) <= 65535 ? undefined : "must be a port number";
    case "agent.instance_id":
      return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value as string) ? undefined : "must be a UUID";
    case "agent.config_files": {
      const bad = (value as string[]).find((file) => file.startsWith("$") && !SPECIAL_CONFIG_FILES.includes(file));
      return bad === undefined ? undefined : `has ${bad}, which is not one of ${SPECIAL_CONFIG_FILES.join(", ")}`;
    }
  }
  return undefined;
}

/** Every problem upstream would have with this parsed config (unknown key, wrong type, missing required key, broken rule). */
export function supervisorConfigProblems(doc: unknown): string[] {
  const problems: string[] = [];
  if (!isMap(doc)) return ["the file must hold a mapping"];
  const walk = (node: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      const path = prefix + key;
      const spec = SUPERVISOR_KEYS[path];
      if (!spec) {
        problems.push(`${path}: unknown key`);
        continue;
      }
      const problem = typeProblem(spec.type, value) ?? ruleProblem(path, value);
      if (problem) problems.push(`${path}: ${problem}`);
      else if (spec.type === "section") walk(value as Record<string, unknown>, path + ".");
    }
  };
  walk(doc, "");
  const has = (path: string) => path.split(".").reduce<unknown>((node, key) => (isMap(node) ? node[key] : undefined), doc) !== undefined;
  for (const [path, spec] of Object.entries(SUPERVISOR_KEYS)) if (spec.required && !has(path)) problems.push(`${path}: required`);
  return problems;
}

/** The AgentCapabilities the supervisor reports for this config: ReportsStatus, then each capability key's value or default. */
export function supervisorCapabilities(doc: Record<string, unknown>): bigint {
  const given = isMap(doc.capabilities) ? doc.capabilities : {};
  let caps = BigInt(AgentCapabilities[`AgentCapabilities_${table.alwaysReported}` as keyof typeof AgentCapabilities]);
  for (const [path, spec] of Object.entries(SUPERVISOR_KEYS)) {
    if (!spec.agentCapability) continue;
    const on = given[path.slice("capabilities.".length)] ?? spec.default;
    if (on === true) caps |= BigInt(AgentCapabilities[`AgentCapabilities_${spec.agentCapability}` as keyof typeof AgentCapabilities]);
  }
  return caps;
}

/** agent.config_files in merge order (later wins), with the special files upstream adds where they are missing. */
export function configFileOrder(doc: Record<string, unknown>): string[] {
  const files = (isMap(doc.agent) && Array.isArray(doc.agent.config_files) ? doc.agent.config_files : []) as string[];
  const missing = (special: string) => !files.includes(special);
  return [
    ...(missing("$OWN_TELEMETRY_CONFIG") ? ["$OWN_TELEMETRY_CONFIG"] : []),
    ...files,
    ...(missing("$OPAMP_EXTENSION_CONFIG") ? ["$OPAMP_EXTENSION_CONFIG"] : []),
    ...(missing("$REMOTE_CONFIG") ? ["$REMOTE_CONFIG"] : []),
  ];
}
