/**
 * The quick-start's stand-in for an unset externalUrl: the URL it serves, a
 * wildcard bind named by its loopback address. Collectors on this host may use
 * it over plain http/ws (loopback); other hosts need externalUrl on https.
 */
export function listenFallbackUrl(served: URL): string {
  const host = served.hostname === "0.0.0.0" ? "127.0.0.1" : served.hostname === "[::]" ? "[::1]" : served.hostname;
  return `${served.protocol}//${host}:${served.port}`;
}
