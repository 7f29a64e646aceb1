/**
 * Liveness of a collector's metrics endpoint: one `GET` over a raw Bun socket,
 * answered alive on a 2xx status line. A socket rather than fetch, which would send
 * this loopback probe through an HTTP(S)_PROXY from the environment, and rather than
 * node:http, whose compatibility layer alone costs the agent about 10 MiB of resident
 * memory (BENCHMARKS.md, svc-agent). Only the status line is read; certificates are
 * not checked, as nothing received is used.
 */
export type MetricsProbe = (url: string) => Promise<boolean>;

const PROBE_TIMEOUT_MS = 2000;
/** A status line longer than this is not HTTP. */
const MAX_STATUS_LINE = 1024;

export const probeMetrics: MetricsProbe = async (url) => {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  const tls = target.protocol === "https:";
  if (!tls && target.protocol !== "http:") return false;
  const hostname = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(target.port || (tls ? 443 : 80));
  const request = `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nUser-Agent: svc-agent\r\nAccept: */*\r\nConnection: close\r\n\r\n`;

  const { promise, resolve } = Promise.withResolvers<boolean>();
  let head = "";
  const timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
  const socket = await Bun.connect({
    hostname,
    port,
    tls: tls ? { rejectUnauthorized: false, serverName: hostname } : undefined,
    socket: {
      open: (s) => void s.write(request),
      data: (s, chunk) => {
        head += chunk.toString("latin1");
        const end = head.indexOf("\r\n");
        if (end < 0 && head.length < MAX_STATUS_LINE) return;
        const status = Number(/^HTTP\/1\.[01] (\d{3}) /.exec(head.slice(0, end < 0 ? undefined : end + 1))?.[1] ?? 0);
        resolve(status >= 200 && status < 300);
        s.end();
      },
      close: () => resolve(false),
      error: () => resolve(false),
      connectError: () => resolve(false),
    },
  }).catch(() => null);
  if (!socket) {
    clearTimeout(timer);
    return false;
  }
  const alive = await promise;
  clearTimeout(timer);
  socket.end();
  return alive;
};
