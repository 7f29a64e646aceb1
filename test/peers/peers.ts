/**
 * The real peers the tests run against, built from test/peers and its nested
 * modules test/peers/alloy and test/peers/ferretdb (Go modules pinned by their go.mod/go.sum) by scripts/peers.sh, which `npm test` runs before
 * `bun test`: no test builds anything. A missing binary is an error that
 * names the build command, so a test that needs a peer fails, never skips.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

const BIN = join(import.meta.dir, "bin");

/** Each peer's binary: test/peers/bin/<name>. */
export const PEERS = {
  /** The OpenTelemetry Collector with exactly the components svc renders for Runtime O (otelcol-svc/). */
  otelcol: join(BIN, "otelcol-svc"),
  /** The OpAMP supervisor, collector-contrib's cmd/opampsupervisor. */
  supervisor: join(BIN, "opampsupervisor"),
  /** Real opamp-go clients (WebSocket and HTTP) scripted over stdin/stdout (opampclient/; test/opamp/opamp-go.ts drives it). */
  opampclient: join(BIN, "opampclient"),
  /** gopkg.in/yaml.v3 decoding as the collector does (yamlv3/). */
  yamlv3: join(BIN, "yamlv3"),
  /** Prometheus' text-format parser, prometheus/common/expfmt (promtext/). */
  promtext: join(BIN, "promtext"),
  /** Go's time.ParseDuration and Prometheus' model.ParseDuration (durations/). */
  durations: join(BIN, "durations"),
  /** FerretDB 1.24.2, a MongoDB wire-protocol server on SQLite or PostgreSQL, from its own module (test/peers/ferretdb/). */
  ferretdb: join(BIN, "ferretdb"),
  /** Alloy v1.18.1's remote-config client on grafana/alloy-remote-config and connect-go, driven by a script (alloy/alloy-remotecfg/). */
  alloyRemotecfg: join(BIN, "alloy-remotecfg"),
  /** Alloy's syntax module: each config parsed, every reference resolved, every attribute evaluated (alloy/alloy-syntax/). */
  alloySyntax: join(BIN, "alloy-syntax"),
} as const;

export type Peer = keyof typeof PEERS;

/** The peer's binary path; throws naming the build command when it has not been built. */
export function peer(name: Peer): string {
  const path = PEERS[name];
  if (!existsSync(path)) {
    throw new Error(`${path} is missing: build the peers with \`bash scripts/peers.sh\` (needs Go 1.26.5; \`npm test\` runs it before the tests)`);
  }
  return path;
}
