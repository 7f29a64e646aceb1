/**
 * /etc/svc/config.yaml is the path of both the agent's config (agent/config.ts) and the
 * server's (server/config/load.ts), so on a host that runs both it is one file. Each
 * program validates its own top-level sections, passes the other's by unread, and still
 * reports any key neither documents. This is the one list of who reads what.
 */
export type HostProgram = "agent" | "server";

/**
 * The top-level keys each program reads. agent/config.ts reads the agent's list as its
 * root keys; server/config/load.test.ts checks the server's against server/config/keys.ts.
 * A section both name (`logging`) is validated by both.
 */
export const HOST_CONFIG_SECTIONS: Readonly<Record<HostProgram, readonly string[]>> = {
  agent: ["server", "agent", "certificates", "collector", "collectors", "logging", "customFingerprints", "browse"],
  server: [
    "externalUrl",
    "listen",
    "tls",
    "storage",
    "database",
    "security",
    "bootstrap",
    "http",
    "rateLimit",
    "downloads",
    "fleet",
    "metrics",
    "opamp",
    "secrets",
    "logging",
    "smtp",
    "sources",
    "webhooks",
  ],
};

/**
 * Keys inside a section both read that only one program reads: the other passes them by.
 * The agent writes its log to `logging.file`; the server logs to stdout (the journal).
 */
export const ONE_PROGRAM_KEYS: Readonly<Record<HostProgram, readonly string[]>> = {
  agent: ["logging.file"],
  server: [],
};

const OTHER: Record<HostProgram, HostProgram> = { agent: "server", server: "agent" };

/** The top-level sections only the other program reads: `program` accepts them and reads nothing in them. */
export function foreignSections(program: HostProgram): string[] {
  const own = HOST_CONFIG_SECTIONS[program];
  return HOST_CONFIG_SECTIONS[OTHER[program]].filter((section) => !own.includes(section));
}

/** Dotted keys in a shared section that only the other program reads. */
export function foreignKeys(program: HostProgram): readonly string[] {
  return ONE_PROGRAM_KEYS[OTHER[program]];
}
