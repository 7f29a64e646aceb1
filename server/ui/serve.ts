/**
 * Serves the web UI from the bundle embedded in the binary: `/` redirects to
 * `/ui/`, /favicon.ico is the UI's SVG icon, hashed assets are cached
 * forever, and every other /ui/ path answers index.html so client-side
 * routes survive a reload. Each file is compressed
 * once, on first use, and sent as brotli or gzip when the browser takes it.
 */
import { brotliCompressSync, constants as zlib } from "node:zlib";
import { acceptsEncoding } from "../lib/accept-encoding.ts";
import { FAVICON, type UiFile } from "./files.ts";
import { UI_SECURITY_HEADERS } from "./headers.ts";

const INDEX = "/ui/index.html";
const IMMUTABLE = "public, max-age=31536000, immutable";

type Bytes = Uint8Array<ArrayBuffer>;

interface Prepared {
  file: UiFile;
  raw: Bytes;
  etag: string;
  gzip?: Bytes;
  br?: Bytes;
}

export class UiServer {
  #files?: Promise<Map<string, Prepared>>;

  /** The answer for a UI path, or null when the path is not the UI's. */
  async handle(req: Request, url: URL): Promise<Response | null> {
    let path = url.pathname;
    // Browsers and tools that ignore the page's <link rel="icon"> ask here; the same SVG answers.
    if (path === "/favicon.ico") path = FAVICON;
    if (path !== "/" && path !== "/ui" && !path.startsWith("/ui/")) return null;
    if (req.method !== "GET" && req.method !== "HEAD") return null;
    if (path === "/" || path === "/ui") return withHeaders(new Response(null, { status: 302, headers: { Location: "/ui/" } }));
    const files = await this.#load();
    let entry = files.get(path);
    // An unknown asset is a 404, not index.html: a stale hashed name must not be parsed as HTML.
    if (!entry && path.startsWith("/ui/assets/")) return null;
    entry ??= files.get(INDEX)!;
    return withHeaders(answer(req, entry));
  }

  #load(): Promise<Map<string, Prepared>> {
    return (this.#files ??= import("./assets.ts").then(({ UI_FILES }) => {
      const map = new Map<string, Prepared>();
      for (const file of UI_FILES) {
        const raw = new TextEncoder().encode(file.text);
        map.set(file.path, { file, raw, etag: `"${Bun.hash(raw).toString(36)}"` });
      }
      return map;
    }));
  }
}

function answer(req: Request, entry: Prepared): Response {
  const headers: Record<string, string> = {
    "Content-Type": entry.file.type,
    "Cache-Control": entry.file.hashed ? IMMUTABLE : "no-cache",
    ETag: entry.etag,
    Vary: "Accept-Encoding",
  };
  if (req.headers.get("if-none-match") === entry.etag) return new Response(null, { status: 304, headers });
  const accepts = req.headers.get("accept-encoding");
  let body = entry.raw;
  if (acceptsEncoding(accepts, "br")) {
    body = entry.br ??= new Uint8Array(brotliCompressSync(entry.raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9 } }));
    headers["Content-Encoding"] = "br";
  } else if (acceptsEncoding(accepts, "gzip")) {
    body = entry.gzip ??= Bun.gzipSync(entry.raw, { level: 9 });
    headers["Content-Encoding"] = "gzip";
  }
  return new Response(req.method === "HEAD" ? null : body, { headers });
}

function withHeaders(response: Response): Response {
  for (const [name, value] of Object.entries(UI_SECURITY_HEADERS)) response.headers.set(name, value);
  return response;
}
