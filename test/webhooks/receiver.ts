/**
 * A webhook receiver for tests: a server on loopback recording each delivery's
 * body and X-Svc-Signature, and the check a real receiver makes of the signature.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export interface Delivery {
  body: string;
  signature: string;
}

/** A receiver on loopback answering each delivery with `status()` (200 unless told otherwise). */
export function webhookReceiver(status: () => number = () => 200) {
  const got: Delivery[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      got.push({ body: await req.text(), signature: req.headers.get("x-svc-signature") ?? "" });
      return new Response("", { status: status() });
    },
  });
  return { got, url: `http://127.0.0.1:${server.port}/hook`, stop: () => server.stop(true) };
}

/** What a receiver does: recompute the HMAC over "<t>.<body>" under the secret and compare in constant time. */
export function verifySignature(secret: string, header: string, body: string): boolean {
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=") as [string, string]));
  const expected = createHmac("sha256", secret).update(`${parts.t}.${body}`).digest();
  const given = Buffer.from(parts.v1 ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
