/**
 * The layer table: every folder under server/, agent/ and shared/ (and each
 * file directly under server/) belongs to one layer, and a layer imports only
 * the layers it lists. A folder's subfolders are part of it (a catalog type's
 * folder is the catalog). check.ts takes every rule from here; only which
 * files under server/ui/ run in the server it reads from the UI's tsconfig.
 */

export type Layer = "edge" | "channels" | "domain" | "store" | "lib" | "shared" | "ui" | "agent";

/**
 * What each layer may import, itself included. Edge: the REST API, the
 * listener, the assembly; channels: the collector and agent protocols the
 * listener hands raw requests to; domain: the rules; store: persistence; lib:
 * server libraries that know no domain. The server, the browser UI and the
 * agent meet only in shared/.
 */
export const MAY_IMPORT: Readonly<Record<Layer, readonly Layer[]>> = {
  edge: ["edge", "channels", "domain", "store", "lib", "shared"],
  channels: ["channels", "domain", "store", "lib", "shared"],
  domain: ["domain", "store", "lib", "shared"],
  store: ["store", "lib", "shared"],
  lib: ["lib", "shared"],
  shared: ["shared"],
  ui: ["ui", "shared"],
  agent: ["agent", "shared"],
};

/** Folders (and the files directly under server/) → their layer. */
export const FOLDERS: Readonly<Record<string, Layer>> = {
  "server/app.ts": "edge",
  "server/main.ts": "edge",
  "server/http": "edge",
  "server/api": "edge",
  "server/metrics": "edge",

  "server/opamp": "channels",
  "server/remotecfg": "channels",
  "server/channel": "channels",

  "server/agents": "domain",
  "server/audit": "domain",
  "server/auth": "domain",
  "server/catalog": "domain",
  "server/collectors": "domain",
  "server/config": "domain",
  "server/configstore": "domain",
  "server/enrollment": "domain",
  "server/events": "domain",
  "server/mail": "domain",
  "server/migrate.ts": "domain",
  "server/ottl": "domain",
  "server/refs": "domain",
  "server/render": "domain",
  "server/rollout": "domain",
  "server/secrets": "domain",
  "server/telemetry": "domain",
  "server/testutil.ts": "domain",
  "server/webhooks": "domain",

  "server/store": "store",

  "server/lib": "lib",
  "server/gen": "lib",
  "server/errors.ts": "lib",
  "server/version.ts": "lib",

  shared: "shared",
  "server/ui": "ui",
  agent: "agent",
};

/**
 * Files whose layer is not their folder's: each channel beside the domain
 * module it serves. The files under server/ui/ that build and serve the bundle
 * run in the server and are edge; check.ts reads them from the UI's tsconfig,
 * which leaves them out.
 */
export const FILES: Readonly<Record<string, Layer>> = {
  "server/agents/channel.ts": "channels",
  "server/enrollment/bootstrap-channel.ts": "channels",
  "server/enrollment/downloads.ts": "channels",
  "server/telemetry/channel.ts": "channels",
};

/** Within the channels, a channel imports only what every channel implements, never another channel. */
export const CHANNELS_SHARE = "server/channel";

/** Imports refused though the layers allow them; `from: "*"` is any folder but those in `except`. */
export const REFUSED: readonly { from: string; to: string; except?: readonly string[]; why: string }[] = [
  { from: "server/http", to: "server/api", why: "the listener is handed its routes, it does not import the endpoints it serves" },
  { from: "*", to: "server/app.ts", except: ["server/main.ts"], why: "only the entry point imports the assembly; the rest take the parts they declare" },
];
