/**
 * Bundles the web UI: Bun.build of main.tsx (minified, content-hashed names)
 * plus an index.html that loads the hashed files. Run as its own process by
 * embed.ts, because Bun.build cannot run inside a macro while the bundler
 * waits for that macro. Prints the files as JSON on stdout.
 */
import { join } from "node:path";
import type { UiFile } from "./files.ts";

export const ASSET_PREFIX = "/ui/assets/";

async function bundle(): Promise<UiFile[]> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "main.tsx")],
    target: "browser",
    minify: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    // React's production build: smaller, and without development-only warnings.
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new AggregateError(result.logs, "the UI bundle failed");
  const files: UiFile[] = [];
  for (const output of result.outputs) {
    const name = output.path.replace(/^\.\//, "");
    files.push({ path: ASSET_PREFIX + name, type: output.type, text: await output.text(), hashed: true });
  }
  files.push({ path: "/ui/index.html", type: "text/html;charset=utf-8", text: indexHtml(files), hashed: false });
  return files;
}

/** No inline script or style, so the CSP can forbid both. */
function indexHtml(files: UiFile[]): string {
  const scripts = files.filter((f) => f.path.endsWith(".js") && !f.path.includes("chunk"));
  const styles = files.filter((f) => f.path.endsWith(".css"));
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    "<title>svc</title>",
    ...styles.map((f) => `<link rel="stylesheet" href="${f.path}">`),
    ...scripts.map((f) => `<script type="module" src="${f.path}"></script>`),
    "</head>",
    '<body><div id="root"></div></body>',
    "</html>",
    "",
  ].join("\n");
}

if (import.meta.main) process.stdout.write(JSON.stringify(await bundle()));
