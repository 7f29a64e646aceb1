/** Webhook URLs: https anywhere; plain http only to a loopback host (a local relay or a test). */
import { ValidationError } from "../errors.ts";

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

export function checkWebhookUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError("The webhook URL is not a URL.", [{ path: "url", message: "must be an absolute http(s) URL" }]);
  }
  const ok = url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.test(url.hostname));
  if (!ok || url.username || url.password) {
    throw new ValidationError("A webhook URL must be https (plain http only to a loopback host) and carry no credentials.", [
      { path: "url", message: "must be https, or http to localhost, 127.0.0.1 or [::1]" },
    ]);
  }
  return url.toString();
}
