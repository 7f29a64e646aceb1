/**
 * GET /collectors?attention= (issue 34 part 1): over a real server and a fleet
 * with a collector in every state "Needs attention" counts (test/attention-fleet.ts),
 * each count GET /dashboard answers is exactly the list the filter pages
 * through, and every listed collector says why it needs attention.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ATTENTION_REASONS, type AttentionReason } from "../../shared/attention.ts";
import type { Dashboard } from "../../shared/dashboard.ts";
import { EXPECTED, seedAttentionFleet } from "../attention-fleet.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import type { RawAgent } from "../opamp/helpers.ts";

let server: TestServer;
const agents: RawAgent[] = [];
let ids: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  ids = await seedAttentionFleet(server, agents);
}, 120_000);
afterAll(async () => {
  for (const agent of agents) agent.close();
  await server.stop();
});

interface Listed {
  id: string;
  name: string;
  attention: AttentionReason[];
}

/** Every page of the list for `query`, one collector a page so the cursor carries the filter. */
async function everyPage(query: string): Promise<Listed[]> {
  const out: Listed[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: Listed[]; nextCursor: string | null } = await server.call(
      `/collectors?limit=1&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(page.items.length).toBeLessThanOrEqual(1);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

test("each dashboard count is the length of the list its filter answers, and names the same collectors", async () => {
  const d = await server.call<Dashboard>("/dashboard");
  for (const reason of ATTENTION_REASONS) {
    const listed = await everyPage(`attention=${reason}`);
    expect({ reason, names: listed.map((c) => c.name) }).toEqual({ reason, names: EXPECTED[reason] });
    expect(listed.length).toBe(d[reason].count);
    expect(listed.map((c) => c.id)).toEqual(d[reason].sample.map((c) => c.id));
    for (const c of listed) expect(c.attention).toContain(reason);
  }
});

test("every row says why it needs attention; one that needs none says so", async () => {
  const all = await everyPage("");
  const byName = Object.fromEntries(all.map((c) => [c.name, c.attention]));
  expect(byName).toEqual({
    good: [],
    failing: ["failed"],
    drifting: ["drifted"],
    pinned: ["pinned"],
    standalone: ["reportingOnly"],
    gone: ["offline"],
    nogw: ["unrenderable"],
  });
});

test("the filter narrows the other filters, and an unknown reason is refused in the one error shape", async () => {
  expect((await everyPage("attention=pinned&q=pin")).map((c) => c.id)).toEqual([ids.pinned!]);
  expect(await everyPage("attention=failed&q=good")).toEqual([]);
  expect(await everyPage("attention=offline&status=online")).toEqual([]);
  const res = await server.api("/collectors?attention=broken");
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
  expect(body.error.code).toBe("validation_failed");
  expect(body.error.details[0]!.path).toContain("attention");
});
