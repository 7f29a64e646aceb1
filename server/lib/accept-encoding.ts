/** Content negotiation on Accept-Encoding (RFC 9110 §12.5.3), for the answers the edge compresses. */

/** Whether the header takes `coding`, named or by `*`; `;q=0` refuses it. */
export function acceptsEncoding(header: string | null, coding: "gzip" | "br"): boolean {
  if (header === null) return false;
  let star = false;
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.split(";").map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    const allowed = q === undefined || Number(q.slice(2)) > 0;
    if (name === coding || (coding === "gzip" && name === "x-gzip")) return allowed;
    if (name === "*") star = allowed;
  }
  return star;
}
