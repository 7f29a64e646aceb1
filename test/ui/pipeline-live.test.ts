/**
 * The pipeline editor follows other people's saves, in Debian's chromium
 * against the real server: with no unsaved edits a save through the API
 * reloads the graph at once; with unsaved edits a notice offers Reload or
 * Keep editing, and a save that keeps the stale base is refused with the
 * API's 409 shown as it is, until Reload takes the stored version.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Topology } from "../../shared/config-records.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let pipelineId = "";
let destinationId = "";
const SLOW = 30_000;

/** source → [batch processors] → destination, left to right but wider apart than Auto-layout puts them. */
function chain(batches: string[]): Topology {
  const ids = ["in", ...batches, "out"];
  return {
    nodes: ids.map((id, i) => ({
      id,
      kind: id === "in" ? "source" : id === "out" ? "destination" : "processor",
      ...(id === "out" ? { ref: destinationId } : {}),
      ...(id !== "in" && id !== "out" ? { processor: { type: "batch", config: {} } } : {}),
      position: { x: i * 300, y: 0 },
    })),
    edges: ids.slice(1).map((id, i) => ({ id: `e-${ids[i]}-${id}`, source: ids[i]!, target: id })),
  } as Topology;
}

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  destinationId = (await server.call<{ id: string }>("/destinations", "POST", { name: "backend", type: "debug", config: {} })).id;
  pipelineId = (await server.call<{ id: string }>("/pipelines", "POST", { name: "shared", signal: "logs", topology: chain([]) })).id;
  const admin = await server.uiAdmin();
  const { page } = browser;
  page.setDefaultTimeout(10_000);
  await signIn(page, server.base, admin, "/ui/pipelines");
  await page.getByRole("link", { name: "shared" }).click();
  await page.getByRole("heading", { name: "shared", level: 1 }).waitFor();
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const nodeItems = () => browser.page.getByRole("list", { name: /^Nodes/ }).locator(":scope > li");
const notice = () => browser.page.getByRole("alert").filter({ hasText: "changed by someone else after you started editing" });

test(
  "with no unsaved edits, someone else's save reloads the graph (and the name)",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Delete node in" }).waitFor();
    expect(await nodeItems().count()).toBe(2);
    await server.call(`/pipelines/${pipelineId}/topology`, "PUT", chain(["first"]));
    await page.getByRole("button", { name: "Delete node first" }).waitFor();
    expect(await nodeItems().count()).toBe(3);
    await page.getByRole("status").getByText("Reloaded: someone else saved this pipeline").waitFor();
    expect(await notice().count()).toBe(0);

    await server.call(`/pipelines/${pipelineId}`, "PUT", { name: "shared logs", signal: "logs" });
    await page.getByRole("heading", { name: "shared logs", level: 1 }).waitFor();
  },
  SLOW,
);

test(
  "with unsaved edits: a notice; Keep editing then Save is the API's 409; Reload takes their version",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Delete node first" }).click(); // a local edit
    await page.getByRole("status").getByText("Unsaved changes").waitFor();
    await server.call(`/pipelines/${pipelineId}/topology`, "PUT", chain(["first", "second"]));
    await notice().waitFor();
    // The draft is untouched while the user decides.
    expect(await page.getByRole("button", { name: "Delete node first" }).count()).toBe(0);
    await browser.screenshot("pipeline-conflict-1280");

    await page.getByRole("button", { name: "Keep editing" }).click();
    expect(await notice().count()).toBe(0);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "was changed by someone else since this edit started" });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("HTTP 409 · stale_version");
    await notice().waitFor(); // offered again
    const stored = await server.call<Topology>(`/pipelines/${pipelineId}/topology`);
    expect(stored.nodes.map((n) => n.id)).toEqual(["in", "first", "second", "out"]);

    await page.getByRole("button", { name: "Reload" }).click();
    await page.getByRole("button", { name: "Delete node second" }).waitFor();
    expect(await nodeItems().count()).toBe(4);
    expect(await notice().count()).toBe(0);
    expect(await refusal.count()).toBe(0);

    // Now based on the stored version, an edit saves.
    await page.getByRole("button", { name: "Auto-layout" }).click();
    await page.getByRole("status").getByText("Unsaved changes").waitFor();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    const after = await server.call<Topology>(`/pipelines/${pipelineId}/topology`);
    expect(after.nodes.map((n) => n.id)).toEqual(["in", "first", "second", "out"]);
    expect(after.nodes[1]!.position).not.toEqual({ x: 300, y: 0 });
    // Our own save's event is not mistaken for someone else's: once a later event (a rename) has shown, the status is still ours.
    await server.call(`/pipelines/${pipelineId}`, "PUT", { name: "shared final", signal: "logs" });
    await page.getByRole("heading", { name: "shared final", level: 1 }).waitFor();
    expect(await page.getByRole("status", { name: "Save state" }).textContent()).toBe("Saved");
    expect(await notice().count()).toBe(0);
    browser.assertClean();
  },
  SLOW,
);
