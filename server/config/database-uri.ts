/**
 * The rule for the external database connection string: `uri` wins;
 * otherwise `server` builds one, a bare host name as an SRV-style
 * `mongodb+srv://` URI and host:port as a plain `mongodb://` one, with the
 * user and password URL-escaped into it.
 */

export interface DatabaseParts {
  uri: string;
  server: string;
  user: string;
  password: string;
  database: string;
}

/** Returns the effective URI, or "" when neither uri nor server is set. */
export function buildDatabaseUri(parts: DatabaseParts): string {
  if (parts.uri !== "") return parts.uri;
  if (parts.server === "") return "";
  // A seed list (a:27017,b:27017) is host:port entries too; SRV takes one bare name.
  const hosts = parts.server.split(",").map((h) => h.trim());
  const hasPort = hosts.every((host) => /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):\d+$/.test(host));
  const scheme = hasPort ? "mongodb" : "mongodb+srv";
  let credentials = "";
  if (parts.user !== "") {
    credentials = encodeURIComponent(parts.user);
    if (parts.password !== "") credentials += ":" + encodeURIComponent(parts.password);
    credentials += "@";
  }
  const path = parts.database === "" ? "" : "/" + encodeURIComponent(parts.database);
  return `${scheme}://${credentials}${hosts.join(",")}${path}`;
}

/**
 * The URI with its password masked, for logs and health. The password runs to
 * the last "@", so a hand-written URI whose password holds an unescaped "/",
 * "?" or "@" is masked too rather than printed.
 */
export function redactUri(uri: string): string {
  return uri.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):.*@/i, "$1:***@");
}
