/**
 * Bundles the web UI: Bun.build of main.tsx (minified, content-hashed names,
 * split so that lazily imported pages become chunks fetched on demand) plus
 * an index.html that loads the entry script and the styles. Run as its own process by
 * embed.ts, because Bun.build cannot run inside a macro while the bundler
 * waits for that macro. Prints the files as JSON on stdout.
 */
import { basename, join } from "node:path";
import { FAVICON, type UiFile } from "./files.ts";

export const ASSET_PREFIX = "/ui/assets/";

async function bundle(): Promise<UiFile[]> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "main.tsx")],
    target: "browser",
    minify: true,
    splitting: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    // React's production build: smaller, and without development-only warnings.
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new AggregateError(result.logs, "the UI bundle failed");
  const outputs = await Promise.all(
    result.outputs.map(async (o) => ({ kind: o.kind, path: ASSET_PREFIX + o.path.replace(/^\.\//, ""), type: o.type, text: await o.text() })),
  );
  const entries = outputs.filter((o) => o.kind === "entry-point");
  const isCss = (o: { path: string }) => o.path.endsWith(".css");
  const entryCss = outputs.filter((o) => isCss(o) && entries.some((e) => stem(e.path) === stem(o.path)));
  const chunkCss = outputs.filter((o) => isCss(o) && !entryCss.includes(o));
  // Bun puts the CSS of lazily imported pages into the entry's stylesheet too, and also
  // emits it per chunk, where nothing loads it; those copies are left out, once proven redundant.
  for (const css of chunkCss) {
    const missing = css.text.split("}").find((rule) => !entryCss.some((e) => e.text.includes(rule)));
    if (missing !== undefined) throw new Error(`the UI bundle: ${css.path} has CSS the entry stylesheet lacks: ${missing.slice(0, 120)}`);
  }
  const files: UiFile[] = outputs.filter((o) => !chunkCss.includes(o)).map(({ path, type, text }) => ({ path, type, text, hashed: true }));
  const html = indexHtml(
    entries.filter((o) => o.path.endsWith(".js")).map((o) => o.path),
    entryCss.map((o) => o.path),
  );
  files.push({ path: FAVICON, type: "image/svg+xml", text: await Bun.file(join(import.meta.dir, "favicon.svg")).text(), hashed: false });
  files.push({ path: "/ui/index.html", type: "text/html;charset=utf-8", text: html, hashed: false });
  return files;
}

/** An output's name without hash and extension: main-1a2b3c.css → main. */
function stem(path: string): string {
  return basename(path).replace(/-[a-z0-9]+\.[a-z]+$/, "");
}

/** No inline script or style, so the CSP can forbid both. Chunks are not listed: the entry imports them when needed. */
function indexHtml(scripts: string[], styles: string[]): string {
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    "<title>svc</title>",
    `<link rel="icon" type="image/svg+xml" href="${FAVICON}">`,
    ...styles.map((path) => `<link rel="stylesheet" href="${path}">`),
    ...scripts.map((path) => `<script type="module" src="${path}"></script>`),
    "</head>",
    '<body><div id="root"></div></body>',
    "</html>",
    "",
  ].join("\n");
}

if (import.meta.main) process.stdout.write(JSON.stringify(await bundle()));
