/**
 * `/downloads/`: what a host fetches before it has any credential — install.sh
 * (compiled into the server, so the snippet always works), the agent packages
 * with their SHA256SUMS from `downloads.dir`, and mirrored collector packages with
 * theirs from `downloads.dir/collectors/` (install.sh --package-base-url
 * {externalUrl}/downloads/collectors, for hosts without internet). Unauthenticated
 * on purpose: none of it is secret, and enrolling still needs a token.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import installScript from "../../installer/install.sh" with { type: "text" };
import { AppError, NotFoundError } from "../errors.ts";
import type { Channel, ChannelHealth, ChannelRequest } from "../channel/channel.ts";
import { decodePathSegment } from "../lib/path.ts";
import { json } from "../lib/json.ts";

const PREFIX = "/downloads/";
/** One plain file name: no directories, no hidden files. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._+~-]{0,254}$/;
const SUMS = "SHA256SUMS";
/** The one subdirectory served: mirrored upstream collector packages. */
export const COLLECTORS_DIR = "collectors";

const CONTENT_TYPES: [suffix: string, type: string][] = [
  [".deb", "application/vnd.debian.binary-package"],
  [".rpm", "application/x-rpm"],
  [".sh", "text/x-shellscript; charset=utf-8"],
];

export interface DownloadEntry {
  name: string;
  size: number;
  sha256: string;
}

export class DownloadsChannel implements Channel {
  readonly name = "downloads";
  readonly path = PREFIX;

  constructor(private readonly dir: string) {}

  async handle({ req, url }: ChannelRequest): Promise<Response> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      throw new AppError(405, "method_not_allowed", "Downloads are read with GET or HEAD.", [], { Allow: "GET, HEAD" });
    }
    const name = decodePathSegment(url.pathname.slice(PREFIX.length));
    if (name === "") return json({ items: await this.list() });
    if (name === "install.sh") return new Response(installScript, { headers: headers("install.sh") });
    const [dir, fileName] = name.startsWith(`${COLLECTORS_DIR}/`) ? [COLLECTORS_DIR, name.slice(COLLECTORS_DIR.length + 1)] : ["", name];
    if (!FILE_NAME.test(fileName)) throw new NotFoundError("Download", name);
    const file = Bun.file(join(this.dir, dir, fileName));
    if (!(await file.exists())) throw new NotFoundError("Download", name);
    return new Response(file, { headers: headers(fileName) });
  }

  /** The packages SHA256SUMS names that are present, with their sizes. */
  async list(): Promise<DownloadEntry[]> {
    const sums = Bun.file(join(this.dir, SUMS));
    if (!(await sums.exists())) return [];
    const entries: DownloadEntry[] = [];
    for (const line of (await sums.text()).split("\n")) {
      const match = /^([0-9a-f]{64}) [ *](\S+)$/.exec(line.trim());
      if (!match || !FILE_NAME.test(match[2]!)) continue;
      const size = fileSize(join(this.dir, match[2]!));
      if (size !== null) entries.push({ name: match[2]!, size, sha256: match[1]! });
    }
    return entries;
  }

  /** Degraded when there is nothing to hand out: install.sh would fail at its download step. */
  health(): ChannelHealth {
    return { state: fileSize(join(this.dir, SUMS)) === null ? "degraded" : "up" };
  }
}

const AGENT_PACKAGE = /^svc-agent[_-].+\.(deb|rpm)$/;

/**
 * Why install.sh cannot install svc-agent from `dir` (null when it can): it
 * needs SHA256SUMS and at least one svc-agent package that file names.
 * The collector-only snippet downloads nothing but install.sh, which is built in.
 */
export async function agentPackagesProblem(dir: string): Promise<string | null> {
  const present = (await new DownloadsChannel(dir).list()).filter((entry) => AGENT_PACKAGE.test(entry.name));
  if (present.length > 0) return null;
  const what = fileSize(join(dir, SUMS)) === null ? `no ${SUMS}` : `no svc-agent package named in ${SUMS}`;
  return `The downloads directory ${dir} (downloads.dir) has ${what}, so install.sh cannot install svc-agent. Build the packages with npm run package (or put the released svc-agent .deb/.rpm files and their SHA256SUMS there) and set downloads.dir to that directory.`;
}

/** Whether `dir` mirrors collector packages, so snippets point install.sh at them instead of the internet. */
export function hasCollectorMirror(dir: string): boolean {
  return fileSize(join(dir, COLLECTORS_DIR, SUMS)) !== null;
}

function headers(name: string): Record<string, string> {
  const type = CONTENT_TYPES.find(([suffix]) => name.endsWith(suffix))?.[1] ?? (name === SUMS ? "text/plain; charset=utf-8" : "application/octet-stream");
  return { "Content-Type": type, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff" };
}

function fileSize(path: string): number | null {
  try {
    const stat = statSync(path);
    return stat.isFile() ? stat.size : null;
  } catch {
    return null;
  }
}
