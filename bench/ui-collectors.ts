/**
 * Web UI at fleet scale: the Collectors page with 10,000 collectors must stay
 * interactive. Starts `server/main.ts` as a child process on a fresh state
 * file, creates the collectors through the REST API (parallel POSTs, so each
 * is a real write with its audit entry), signs in to the UI in Debian's
 * chromium (test/ui/browser.ts: same flags, fresh profile) and measures a
 * navigation to /ui/collectors: first row visible, long tasks after it, how
 * soon typing in the search box is painted, DOM rows (the virtualisation),
 * scrolling to the end (every page fetched), and the JS heap.
 * Usage: bun bench/ui-collectors.ts [collectors=10000] [concurrency=32]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openBrowser } from "../test/ui/browser.ts";
import { closedLoop } from "./lib.ts";

const [count = 10_000, concurrency = 32] = process.argv.slice(2).map(Number);
const TARGETS = { firstRowMs: 1500, longTaskMs: 200, domRows: 200 };

const dir = mkdtempSync(join(tmpdir(), "svc-bench-ui-"));
const token = "svcsa_" + "U".repeat(40);
const port = 20000 + Math.floor(Math.random() * 20000);
const base = `http://127.0.0.1:${port}`;
const server = Bun.spawn([process.execPath, join(import.meta.dir, "../server/main.ts")], {
  env: {
    ...process.env,
    SVC_LISTEN: `127.0.0.1:${port}`,
    SVC_STORAGE_BOLTPATH: join(dir, "state.db"),
    SVC_BOOTSTRAP_ADMINTOKEN: token,
    SVC_LOGGING_LEVEL: "warn",
    // Seeding 10,000 collectors through the API from one token is far past the default rate limit.
    SVC_RATELIMIT_API_PERSECOND: "1000000",
    SVC_RATELIMIT_API_BURST: "1000000",
  },
  stdout: "pipe",
  stderr: "inherit",
});

/** The UI admin's password, from the file the banner names once the server is ready. */
async function uiPassword(): Promise<string> {
  const decoder = new TextDecoder();
  const reader = server.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value);
    const match = /UI login: admin, password in (\S+)\n/.exec(text);
    if (match) return readFileSync(match[1]!, "utf8").trim();
  }
  throw new Error(`the server exited without printing the UI login:\n${text}`);
}

/** In the page before any script: long tasks, and the moment the first collector row is in the DOM. */
function instrument() {
  const w = window as unknown as { longTasks: { start: number; duration: number }[]; firstRow: number | null };
  w.longTasks = [];
  w.firstRow = null;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) w.longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
  const poll = () => {
    if (document.querySelector(".collector-body [role=row]")) w.firstRow = performance.now();
    else requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
}

const ms = (n: number) => `${n.toFixed(0)} ms`;

try {
  const password = await uiPassword();
  const seedStart = performance.now();
  let made = 0;
  const seed = await closedLoop(count, concurrency, async () => {
    const i = made++;
    const res = await fetch(`${base}/api/v1/collectors`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        name: `collector-${String(i).padStart(5, "0")}`,
        environment: i % 3 === 0 ? "prod" : "staging",
        managementMode: i % 2 === 0 ? "opamp" : "rcfg-remotecfg",
        tags: { team: ["payments", "search", "ingest", "edge"][i % 4]!, rack: `r${i % 40}` },
      }),
    });
    if (res.status !== 201) throw new Error(`POST /collectors: ${res.status} ${await res.text()}`);
  });
  const seedSeconds = (performance.now() - seedStart) / 1000;

  const browser = await openBrowser({ width: 1280, height: 800 });
  try {
    const { page } = browser;
    // Sign in on a light page, so the bundle is cached and the measured navigation is the list's own.
    await page.goto(`${base}/ui/login?next=%2Fui%2Fsystem`);
    await page.getByLabel("Username").fill("admin");
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/ui\/system$/);
    await page.addInitScript(instrument);

    await page.goto(`${base}/ui/collectors`);
    await page.waitForFunction(() => (window as unknown as { firstRow: number | null }).firstRow !== null, undefined, { timeout: 30_000 });
    const firstRowMs = await page.evaluate(() => (window as unknown as { firstRow: number }).firstRow);
    await page.getByText(`Showing 50 of ${count} collectors.`, { exact: true }).waitFor();
    const domRowsFirst = await page.locator("[role=row]").count();

    // Typing while the page is fresh: the time from each key's input event to the next frame.
    await page.evaluate(() => {
      const w = window as unknown as { echoes: number[] };
      w.echoes = [];
      document.getElementById("filter-q")!.addEventListener("input", (event) => {
        requestAnimationFrame(() => w.echoes.push(performance.now() - event.timeStamp));
      });
    });
    await page.getByLabel("Search").pressSequentially("collector-0999", { delay: 20 });
    await page.waitForFunction(() => (window as unknown as { echoes: number[] }).echoes.length >= 14);
    const echoes = await page.evaluate(() => (window as unknown as { echoes: number[] }).echoes);
    await page.getByLabel("Search").fill("");

    // Scroll to the end, a frame at a time, until every page is in; note the most rows ever in the DOM.
    const scroll = await page.evaluate(async (total) => {
      const table = document.querySelector<HTMLElement>("[role=table]")!;
      const status = document.querySelector("[aria-live]")!;
      const started = performance.now();
      let maxRows = 0;
      while (status.textContent !== `Showing ${total} collectors.`) {
        table.scrollTop = table.scrollHeight;
        maxRows = Math.max(maxRows, document.querySelectorAll("[role=row]").length);
        await new Promise((resolve) => requestAnimationFrame(resolve));
        if (performance.now() - started > 120_000) throw new Error(`stuck at: ${status.textContent}`);
      }
      const seconds = (performance.now() - started) / 1000;
      // The last page's rows were added below the view: scroll to them.
      for (let i = 0; i < 3; i++) {
        table.scrollTop = table.scrollHeight;
        await new Promise((resolve) => requestAnimationFrame(resolve));
      }
      return { seconds, maxRows };
    }, count);
    const lastRow = await page.locator("[role=row]").last().getAttribute("aria-rowindex");

    const cdp = await browser.context.newCDPSession(page);
    await cdp.send("HeapProfiler.collectGarbage");
    const heap = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number };
    const longTasks = await page.evaluate(() => (window as unknown as { longTasks: { start: number; duration: number }[] }).longTasks);
    const afterFirst = longTasks.filter((t) => t.start + t.duration > firstRowMs);
    const worstLoadTask = Math.max(0, ...longTasks.filter((t) => t.start <= firstRowMs).map((t) => t.duration));
    const worstAfter = Math.max(0, ...afterFirst.map((t) => t.duration));

    const rows: [string, string, string][] = [
      ["seed: POST /collectors", `${count} in ${seedSeconds.toFixed(1)} s (${seed.perSecond.toFixed(0)}/s, ${concurrency} in flight)`, ""],
      ["first row visible (from navigation start)", ms(firstRowMs), `< ${TARGETS.firstRowMs} ms`],
      ["longest task before first row", ms(worstLoadTask), ""],
      ["long tasks after first row (incl. typing, scrolling)", `${afterFirst.length}, longest ${ms(worstAfter)}`, `none > ${TARGETS.longTaskMs} ms`],
      ["typing: input → next frame, max of 14 keys", ms(Math.max(...echoes)), "≤ 1 frame"],
      ["DOM rows after first render (incl. header)", String(domRowsFirst), `< ${TARGETS.domRows}`],
      [`scroll to the end (${count} rows, all pages)`, `${scroll.seconds.toFixed(1)} s`, ""],
      ["most DOM rows while scrolling", String(scroll.maxRows), `< ${TARGETS.domRows}`],
      ["last row's aria-rowindex", String(lastRow), String(count + 1)],
      ["JS heap used after GC, all loaded", `${(heap.usedSize / 1024 / 1024).toFixed(1)} MiB`, ""],
      ["console errors", browser.errors.length === 0 ? "none" : browser.errors.join("; "), "none"],
    ];
    console.log("| Measure | Result | Target |\n|---|---|---|");
    for (const row of rows) console.log(`| ${row.join(" | ")} |`);
    const met =
      firstRowMs < TARGETS.firstRowMs &&
      worstAfter <= TARGETS.longTaskMs &&
      domRowsFirst < TARGETS.domRows &&
      scroll.maxRows < TARGETS.domRows &&
      browser.errors.length === 0;
    console.log(met ? "\nall targets met" : "\nTARGET MISSED");
  } finally {
    await browser.close();
  }
} finally {
  server.kill();
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
