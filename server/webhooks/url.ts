/**
 * Webhook targets, checked twice (address.ts says which addresses are allowed):
 * - on save (`checkWebhookUrl`): https, no credentials; a literal IP address
 *   or a well-known internal name (cloud metadata, localhost) must be allowed;
 *   plain http only to a loopback host and only with `allowPrivateTargets`;
 * - before every delivery (`refusedTarget`): the host is resolved and every
 *   address it resolves to must be allowed, so a public-looking name that
 *   points inside is refused too.
 * Residue: Bun's fetch resolves the name again when it connects and cannot be
 * pinned to the address checked, so a name whose DNS answer changes between
 * the check and the connect (DNS rebinding, a TTL of 0) can still reach an
 * internal address once. Redirects are never followed (deliver.ts).
 */
import { lookup } from "node:dns/promises";
import { ValidationError } from "../errors.ts";
import { allowedClass, classifyAddress } from "./address.ts";

const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
/** Names of cloud metadata services that answer inside a VM without an IP literal in the URL. */
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

/** The message of a delivery refused by `refusedTarget`; says no more than that (the log is read by admins, not the network). */
export const REFUSED_PRIVATE = "refused: resolves to a private address";

const refuse = (message: string) => new ValidationError(`The webhook URL is refused: ${message}.`, [{ path: "url", message }]);

export function checkWebhookUrl(text: string, allowPrivateTargets = false): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError("The webhook URL is not a URL.", [{ path: "url", message: "must be an absolute http(s) URL" }]);
  }
  if (url.username || url.password) throw refuse("must carry no credentials");
  const host = url.hostname.replace(/\.$/, "").toLowerCase();
  const loopback = LOOPBACK.test(host);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback && allowPrivateTargets)) {
    throw refuse(allowPrivateTargets ? "must be https, or http to localhost, 127.0.0.1 or [::1]" : "must be https");
  }
  const cls = METADATA_NAMES.has(host) ? "forbidden" : loopback ? "internal" : classifyAddress(host);
  if (cls !== null && !allowedClass(cls, allowPrivateTargets)) {
    throw refuse(cls === "forbidden" ? "must not be a link-local, metadata, multicast or reserved address" : "must not be a private or loopback address (webhooks.allowPrivateTargets)");
  }
  return url.toString();
}

export type Lookup = (host: string) => Promise<string[]>;

const lookupAll: Lookup = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Null when every address `url`'s host resolves to may be reached; else the message for the delivery log. A failed lookup throws. */
export async function refusedTarget(url: string, allowPrivateTargets: boolean, resolve: Lookup = lookupAll): Promise<string | null> {
  const host = new URL(url).hostname.replace(/\.$/, "").toLowerCase();
  if (METADATA_NAMES.has(host)) return REFUSED_PRIVATE;
  const literal = classifyAddress(host);
  const classes = literal !== null ? [literal] : (await resolve(host)).map((address) => classifyAddress(address) ?? "forbidden");
  return classes.length > 0 && classes.every((cls) => allowedClass(cls, allowPrivateTargets)) ? null : REFUSED_PRIVATE;
}
