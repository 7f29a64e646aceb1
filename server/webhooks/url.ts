/**
 * Webhook targets, checked twice (address.ts says which addresses are allowed):
 * - on save (`checkWebhookUrl`): https, no credentials; a literal IP address
 *   or a well-known internal name (cloud metadata, localhost) must be allowed;
 *   plain http only to a loopback host and only with `allowPrivateTargets`;
 * - before every delivery (`pinTarget`): the host is resolved and every
 *   address it resolves to must be allowed, so a public-looking name that
 *   points inside is refused too. The delivery then connects to the address
 *   that was checked, not to the name (which fetch would resolve again, and a
 *   DNS answer that changes in between, DNS rebinding, could point inside):
 *   the URL carries the address, the Host header the name, and for https the
 *   TLS server name is the name, so SNI and the certificate check are the
 *   name's (Bun's fetch verifies against `tls.serverName`). Redirects are
 *   never followed (deliver.ts).
 */
import { lookup } from "node:dns/promises";
import { ValidationError } from "../errors.ts";
import { allowedClass, classifyAddress } from "./address.ts";

const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
/** Names of cloud metadata services that answer inside a VM without an IP literal in the URL. */
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);

/** The message of a delivery refused by `pinTarget`; says no more than that (the log is read by admins, not the network). */
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
    throw refuse(
      cls === "forbidden"
        ? "must not be a link-local, metadata, multicast or reserved address"
        : "must not be a private or loopback address (webhooks.allowPrivateTargets)",
    );
  }
  return url.toString();
}

export type Lookup = (host: string) => Promise<string[]>;

const lookupAll: Lookup = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Where a delivery connects: `url` with the checked address in place of the name, and the name for Host and TLS. */
export interface PinnedTarget {
  url: string;
  /** The original host[:port], for the Host header; absent when the URL already held an IP address. */
  host?: string;
  serverName?: string;
}

/** The delivery's pinned target, or `refused` when the host is (or resolves to any address) not allowed. A failed lookup throws. */
export async function pinTarget(url: string, allowPrivateTargets: boolean, resolve: Lookup = lookupAll): Promise<PinnedTarget | { refused: string }> {
  const parsed = new URL(url);
  const host = parsed.hostname.replace(/\.$/, "").toLowerCase();
  if (METADATA_NAMES.has(host)) return { refused: REFUSED_PRIVATE };
  const literal = classifyAddress(host);
  if (literal !== null) return allowedClass(literal, allowPrivateTargets) ? { url } : { refused: REFUSED_PRIVATE };
  const addresses = await resolve(host);
  const allowed = addresses.length > 0 && addresses.every((address) => allowedClass(classifyAddress(address) ?? "forbidden", allowPrivateTargets));
  if (!allowed) return { refused: REFUSED_PRIVATE };
  const pinned = new URL(url);
  const address = addresses[0]!;
  pinned.hostname = address.includes(":") ? `[${address}]` : address;
  return { url: pinned.toString(), host: parsed.host, serverName: host };
}
