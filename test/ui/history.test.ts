/**
 * Names, not UUIDs, in Debian's chromium against the real server: pending
 * changes read "Source “nginx logs”" with a link to the record (the path
 * beside it); a commit of the history opens its files by name and its diff
 * against its parent; "Download history (git bundle)" downloads a bundle real
 * git clones; the audit page names each entry's record (a deleted one by its
 * id, marked "(deleted)"), and a commit entry links to that commit's diff.
 * Desktop and phone screenshots, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, phone, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 30_000;
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
let ids: { source: string; collector: string; pipeline: string; doomed: string };
let first: string;
let second: string;

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  const destination = await call<{ id: string }>("/destinations", "POST", { name: "gateway", type: "debug", config: {} });
  const source = await call<{ id: string }>("/sources", "POST", { name: "nginx logs", type: "filelog", config: { include: ["/var/log/nginx/*.log"] } });
  const topology = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: destination.id },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const pipeline = await call<{ id: string }>("/pipelines", "POST", { name: "main", signal: "logs", topology });
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "edge-1" });
  await call(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id });
  await call("/routes", "POST", { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });
  first = (await call<{ commit: string }>("/commit", "POST", { message: "nginx to the gateway" })).commit;
  const doomed = await call<{ id: string }>("/sources", "POST", { name: "short-lived", type: "filelog", config: { include: ["/var/log/tmp.log"] } });
  await call(`/sources/${doomed.id}`, "DELETE");
  await call(`/sources/${source.id}`, "PUT", { name: "nginx access", type: "filelog", config: { include: ["/var/log/nginx/access.log"] } });
  second = (await call<{ commit: string }>("/commit", "POST", { message: "Only the access log" })).commit;
  // Pending again: a new destination, the pipeline renamed.
  await call("/destinations", "POST", { name: "archive", type: "debug", config: {} });
  await call(`/pipelines/${pipeline.id}`, "PUT", { name: "main logs", signal: "logs", topology });
  ids = { source: source.id, collector: collector.id, pipeline: pipeline.id, doomed: doomed.id };
  await signIn(browser.page, server.base, await server.uiAdmin(), "/ui/changes");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test(
  "pending changes name their records, linked, with the path beside",
  async () => {
    const { page } = browser;
    await page.getByText("2 changed files.").waitFor();
    const files = page.getByRole("list", { name: "Changed files" }).getByRole("listitem");
    const pipeline = files.filter({ hasText: "Pipeline “main logs”" });
    expect(await pipeline.textContent()).toContain(`pipelines/${ids.pipeline}.yaml`);
    expect(await pipeline.textContent()).toContain("modified");
    expect(await pipeline.getByRole("link", { name: "“main logs”" }).getAttribute("href")).toBe(`/ui/pipelines/${ids.pipeline}`);
    expect(await files.filter({ hasText: "Destination “archive”" }).textContent()).toContain("added");
    await browser.screenshot("history-pending-1280");
  },
  SLOW,
);

test(
  "a commit of the history opens its files by name and its diff against its parent",
  async () => {
    const { page } = browser;
    const history = page.getByRole("region", { name: "Commits, newest first" });
    const open = history.getByRole("button", { name: "Only the access log" });
    expect(await open.getAttribute("aria-expanded")).toBe("false");
    await open.click();
    expect(await open.getAttribute("aria-expanded")).toBe("true");
    const files = page.getByRole("list", { name: `Files changed by ${second.slice(0, 7)}` }).getByRole("listitem");
    await files.first().waitFor();
    expect(await files.count()).toBe(1); // the short-lived source came and went between the two commits
    const source = files.filter({ hasText: "Source “nginx access”" });
    expect(await source.getByRole("link", { name: "“nginx access”" }).getAttribute("href")).toBe(`/ui/sources?edit=${ids.source}`);
    const diff = source.getByRole("region", { name: `Diff of sources/${ids.source}.yaml` });
    const text = await diff.textContent();
    expect(text).toContain("nginx logs");
    expect(text).toContain("nginx access");
    expect(text).toContain("/var/log/nginx/access.log");
    await browser.screenshot("history-commit-diff-1280");
    await phone(browser, "history-commit-diff-390");

    // The first commit added every file; its route reads by its source and pipeline.
    await history.getByRole("button", { name: "nginx to the gateway" }).click();
    const added = page.getByRole("list", { name: `Files changed by ${first.slice(0, 7)}` }).getByRole("listitem");
    await added.first().waitFor();
    expect(await added.count()).toBe(5);
    expect(await added.filter({ hasText: "Route “nginx logs → main”" }).count()).toBe(1);
    expect(await added.filter({ hasText: "Collector “edge-1” activations" }).count()).toBe(1);
    // One commit open at a time.
    expect(await open.getAttribute("aria-expanded")).toBe("false");
  },
  SLOW,
);

test(
  "the history downloads as a git bundle that git clones",
  async () => {
    const { page } = browser;
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download history (git bundle)" }).click()]);
    expect(download.suggestedFilename()).toBe(`svc-config-${second.slice(0, 7)}.bundle`);
    const dir = mkdtempSync(join(tmpdir(), "svc-bundle-"));
    try {
      const bundle = join(dir, "history.bundle");
      await download.saveAs(bundle);
      const clone = Bun.spawnSync(["git", "clone", "-q", bundle, join(dir, "clone")]);
      expect(clone.stderr.toString()).toBe("");
      const log = Bun.spawnSync(["git", "-C", join(dir, "clone"), "log", "--format=%H %s"])
        .stdout.toString()
        .trim();
      expect(log).toBe(`${second} Only the access log\n${first} nginx to the gateway`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  SLOW,
);

test(
  "the audit page names each entry's record; a deleted one keeps its id",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/audit`);
    const table = page.getByRole("region", { name: "Audit entries" });
    const row = (action: string) => table.getByRole("row").filter({ has: page.getByRole("rowheader", { name: action, exact: true }) });
    await row("source.update").waitFor();
    expect(await row("source.update").getByRole("link", { name: "“nginx access”" }).getAttribute("href")).toBe(`/ui/sources?edit=${ids.source}`);
    expect(await row("collector.create").getByRole("link", { name: "“edge-1”" }).getAttribute("href")).toBe(`/ui/collectors/${ids.collector}`);
    const deleted = row("source.delete");
    expect(await deleted.textContent()).toContain("“short-lived”");
    expect(await deleted.textContent()).toContain(ids.doomed);
    expect(await deleted.textContent()).toContain("(deleted)");
    expect(await deleted.getByRole("link").count()).toBe(0);
    // The source an activation names in its details reads by name too.
    expect(
      await row("collector.source.activate")
        .getByRole("list", { name: "Records named in the details" })
        .getByRole("link", { name: "“nginx access”" })
        .getAttribute("href"),
    ).toBe(`/ui/sources?edit=${ids.source}`);
    await browser.screenshot("history-audit-1280");
    await phone(browser, "history-audit-390");

    // A commit entry opens that commit's diff in the history.
    await row("config.commit")
      .first()
      .getByRole("link", { name: second.slice(0, 7) })
      .click();
    await page.waitForURL((url) => url.pathname === "/ui/changes" && url.searchParams.get("commit") === second);
    await page
      .getByRole("list", { name: `Files changed by ${second.slice(0, 7)}` })
      .getByText("Source “nginx access”")
      .waitFor();
  },
  SLOW,
);

test("no console or page errors", () => {
  browser.assertClean();
});
