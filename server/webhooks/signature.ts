/**
 * Delivery signatures: `X-Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256
 * of "<t>.<body>" under the hook's secret>`. The receiver recomputes it and
 * rejects an old `t` to stop replays.
 */
import { createHmac } from "node:crypto";

export const SIGNATURE_HEADER = "X-Svc-Signature";

export function signature(secret: string, unixSeconds: number, body: string): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}
