/**
 * UiServer without a browser: which paths are the UI's, the SPA fallback,
 * and content negotiation and revalidation, which the browser test does not
 * reach.
 */
import { expect, test } from "bun:test";
import { UiServer } from "./serve.ts";

const ui = new UiServer();
const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  ui.handle(new Request(`http://svc.test${path}`, { method, headers }), new URL(`http://svc.test${path}`));

test("/ and /ui redirect to /ui/; API-like and foreign paths are not the UI's", async () => {
  for (const path of ["/", "/ui"]) {
    const res = (await get(path))!;
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/ui/");
  }
  expect(await get("/uix")).toBeNull();
  expect(await get("/metrics")).toBeNull();
  expect(await get("/ui/login", {}, "POST")).toBeNull();
});

test("every /ui/ path answers index.html, but an unknown asset is a 404", async () => {
  const a = (await get("/ui/collectors/abc"))!;
  const b = (await get("/ui/"))!;
  expect(a.headers.get("content-type")).toStartWith("text/html");
  expect(await a.text()).toBe(await b.text());
  expect(await get("/ui/assets/main-stale.js")).toBeNull();
});

test("brotli is preferred, gzip next, identity last; ETag revalidates", async () => {
  const br = (await get("/ui/", { "accept-encoding": "gzip, deflate, br" }))!;
  expect(br.headers.get("content-encoding")).toBe("br");
  const gzip = (await get("/ui/", { "accept-encoding": "gzip" }))!;
  expect(gzip.headers.get("content-encoding")).toBe("gzip");
  const plain = (await get("/ui/"))!;
  expect(plain.headers.get("content-encoding")).toBeNull();
  expect(plain.headers.get("vary")).toBe("Accept-Encoding");
  const etag = plain.headers.get("etag")!;
  const again = (await get("/ui/", { "if-none-match": etag }))!;
  expect(again.status).toBe(304);
  const head = (await get("/ui/", {}, "HEAD"))!;
  expect(head.status).toBe(200);
  expect(await head.text()).toBe("");
});

test("index.html loads only the entry script; the lazily imported chunks are served compressed and cached forever", async () => {
  const html = await (await get("/ui/"))!.text();
  const scripts = [...html.matchAll(/<script type="module" src="([^"]+)"><\/script>/g)].map((m) => m[1]!);
  expect(scripts).toHaveLength(1);
  const entry = await (await get(scripts[0]!))!.text();
  const chunks = [...new Set([...entry.matchAll(/import\("\.\/([\w-]+\.js)"\)/g)].map((m) => `/ui/assets/${m[1]}`))];
  expect(chunks.map((c) => c.replace(/-\w+\.js$/, "")).sort()).toEqual(
    // The dashboard (the landing page) is in the entry and loads uPlot only for its chart.
    ["Changes", "Chart", "CollectorDetail", "Collectors", "PipelineEditor"].map((name) => `/ui/assets/${name}`),
  );
  for (const chunk of chunks) {
    expect(html).not.toContain(chunk);
    const res = (await get(chunk, { "accept-encoding": "gzip, br" }))!;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/javascript");
    expect(res.headers.get("content-encoding")).toBe("br");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
  }
});

test("the favicon is one SVG at /ui/favicon.svg and /favicon.ico, revalidated rather than cached forever", async () => {
  const svg = (await get("/ui/favicon.svg"))!;
  const ico = (await get("/favicon.ico"))!;
  for (const res of [svg, ico]) {
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/svg+xml");
    expect(res.headers.get("cache-control")).toBe("no-cache");
  }
  expect(await ico.text()).toBe(await svg.text());
  expect(await get("/favicon.ico", {}, "POST")).toBeNull();
  expect(await (await get("/ui/"))!.text()).toContain('<link rel="icon" type="image/svg+xml" href="/ui/favicon.svg">');
});
