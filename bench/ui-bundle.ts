/**
 * The web UI's download: builds it as the server embeds it (server/ui/bundle.ts)
 * and prints every file's size raw, gzip -9 and brotli q9 (what serve.ts sends),
 * the entry script (the one index.html loads) first. Usage: bun bench/ui-bundle.ts
 */
import { brotliCompressSync, constants as zlib } from "node:zlib";
import { join } from "node:path";
import type { UiFile } from "../server/ui/files.ts";

const child = Bun.spawn([process.execPath, join(import.meta.dir, "../server/ui/bundle.ts")], { stdout: "pipe", stderr: "inherit" });
const files = JSON.parse(await new Response(child.stdout).text()) as UiFile[];
if ((await child.exited) !== 0) throw new Error("the UI bundle failed");

const index = files.find((f) => f.path === "/ui/index.html")!.text;
const entry = (f: UiFile) => index.includes(`src="${f.path}"`);
const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const rows = files
  .filter((f) => f.path.endsWith(".js") || f.path.endsWith(".css"))
  .sort((a, b) => Number(entry(b)) - Number(entry(a)) || b.text.length - a.text.length)
  .map((f) => {
    const raw = new TextEncoder().encode(f.text);
    const br = brotliCompressSync(raw, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9 } }).length;
    return `| ${f.path.replace("/ui/assets/", "")}${entry(f) ? " (entry)" : index.includes(f.path) ? " (linked)" : ""} | ${kib(raw.length)} | ${kib(Bun.gzipSync(raw, { level: 9 }).length)} | ${kib(br)} |`;
  });
console.log(["| file | raw | gzip | brotli |", "|---|---|---|---|", ...rows].join("\n"));
