/**
 * Bounds on the matchers a caller hands the server (issue 33, item 5), over
 * HTTP: a regular expression whose RE2 program is over MAX_MATCHER_PROGRAM
 * instructions, or a list of them over MAX_MATCHERS_PROGRAM together, is a
 * 400 naming the matcher (or the list) and why, on /matchers/preview,
 * `GET /collectors?match=`, `POST /collectors/tags` and a pipeline's
 * matchers, with nothing stored; the issue's attack (32 matchers of 1,024
 * characters by a viewer) is refused; matchers within the bounds still
 * select, over a fleet large enough that the walk yields part-way, and those
 * that would cost more than SCAN_BUDGET_MS over the fleet are stopped (422).
 * Behaviour only: the time these take is measured in bench/matchers.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_MATCHER_PROGRAM, MAX_MATCHERS_PROGRAM } from "../../shared/matchers.ts";
import { SYSTEM_ACTOR } from "../../server/audit/audit.ts";
import { SCAN_BUDGET_MS } from "../../server/collectors/collectors.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";

let server: TestServer;
let viewer: string;
beforeAll(async () => {
  server = await startTestServer();
  viewer = await tokenWithScopes(server, ["collectors:read", "config:read"]);
});
afterAll(() => server.stop());

/** The issue's matcher: 1,024 characters of `(?:[a-zA]{1000}|…)*x`, about 80,000 RE2 instructions. */
const ISSUE_MATCHER = (() => {
  const alternatives: string[] = [];
  let text = 'x=~"(?:)*x"';
  for (let i = 0; text.length + 14 <= 1024; i++) {
    alternatives.push(`[a-zA${String.fromCharCode(66 + (i % 24))}]{1000}`);
    text = `x=~"(?:${alternatives.join("|")})*x"`;
  }
  return text;
})();

/** A matcher on `key` compiling to about `size` instructions: `[a-z]{n}` is n of them. */
const sized = (key: string, size: number) => `${key}=~"[a-z]{${size - 4}}"`;

async function refused(res: Response): Promise<{ status: number; code: string; details: ErrorBody["error"]["details"] }> {
  const { error } = (await res.json()) as ErrorBody;
  return { status: res.status, code: error.code, details: error.details };
}

describe("/matchers/preview by a viewer", () => {
  const preview = (matchers: string[]) => server.api("/matchers/preview", { method: "POST", token: viewer, json: { matchers } });

  test("the issue's 32 matchers of 1,024 characters are a 400 naming each", async () => {
    expect(ISSUE_MATCHER.length).toBeGreaterThan(1000);
    const answer = await refused(await preview(Array.from({ length: 32 }, () => ISSUE_MATCHER)));
    expect({ status: answer.status, code: answer.code }).toEqual({ status: 400, code: "validation_failed" });
    expect(answer.details.map((d) => d.path)).toEqual(Array.from({ length: 32 }, (_, i) => `matchers[${i}]`));
    expect(answer.details[0]!.message).toContain(`RE2 instructions, more than the ${MAX_MATCHER_PROGRAM} a matcher may use`);
  });

  test("32 matchers each just within the cap are a 400 naming the list", async () => {
    const answer = await refused(await preview(Array.from({ length: 32 }, (_, i) => sized(`k${i}`, MAX_MATCHER_PROGRAM))));
    expect({ status: answer.status, paths: answer.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["matchers"] });
    expect(answer.details[0]!.message).toContain(`more than the ${MAX_MATCHERS_PROGRAM} one list of matchers may use`);
  });

  test("one matcher over the program cap is a 400 naming it, with its size and the cap", async () => {
    const answer = await refused(await preview(["env=prod", ISSUE_MATCHER]));
    expect({ status: answer.status, code: answer.code, paths: answer.details.map((d) => d.path) }).toEqual({
      status: 400,
      code: "validation_failed",
      paths: ["matchers[1]"],
    });
    expect(answer.details[0]!.message).toContain("column 4");
    expect(answer.details[0]!.message).toContain(`more than the ${MAX_MATCHER_PROGRAM} a matcher may use`);

    const over = await refused(await preview([sized("region", MAX_MATCHER_PROGRAM + 20)]));
    expect(over.details.map((d) => d.path)).toEqual(["matchers[0]"]);
    expect(over.details[0]!.message).toMatch(new RegExp(`compiles to ${MAX_MATCHER_PROGRAM + 20} RE2 instructions`));
  });

  test("matchers each within the cap but over the total together are a 400 naming the list", async () => {
    const count = Math.floor(MAX_MATCHERS_PROGRAM / MAX_MATCHER_PROGRAM) + 1;
    const answer = await refused(await preview(Array.from({ length: count }, (_, i) => sized(`k${i}`, MAX_MATCHER_PROGRAM))));
    expect({ status: answer.status, paths: answer.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["matchers"] });
    expect(answer.details[0]!.message).toContain(`RE2 instructions together, more than the ${MAX_MATCHERS_PROGRAM}`);
  });

  test("the largest list allowed still selects, exactly, over a fleet the walk yields through", async () => {
    const count = 3_000;
    const base = `big-${Math.random().toString(36).slice(2, 8)}`;
    // Written straight through the domain: 3,000 API calls would only measure the API.
    for (let i = 0; i < count; i++) {
      // Cheap to refuse (the first character differs), so the walk stays well within SCAN_BUDGET_MS on a busy machine.
      const zone = i % 3 === 0 ? "a".repeat(MAX_MATCHER_PROGRAM - 4) : "b";
      await server.app.collectors.create(SYSTEM_ACTOR, { name: `${base}-${i}`, tags: { fleet: base, zone } });
    }
    const full = MAX_MATCHERS_PROGRAM / MAX_MATCHER_PROGRAM;
    const matchers = [`fleet="${base}"`, ...Array.from({ length: full }, () => `zone=~"[a]{${MAX_MATCHER_PROGRAM - 4}}"`)];
    const res = await preview(matchers);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { count: number; items: { name: string }[] };
    expect(body.count).toBe(count / 3);
    expect(body.items.map((c) => c.name)).toEqual(Array.from({ length: 20 }, (_, i) => `${base}-${i * 3}`));
  }, 120_000);
});

test("matchers within the caps that would cost more than SCAN_BUDGET_MS over this fleet are stopped: 422, and the server still answers", async () => {
  const base = `costly-${Math.random().toString(36).slice(2, 8)}`;
  // 1,024 characters of a/A/x: every position keeps RE2's NFA threads alive in the patterns below.
  let seed = 7;
  const adversarial = () =>
    Array.from({ length: 1024 }, () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return "aAx"[(seed >> 16) % 3];
    }).join("");
  for (let i = 0; i < 2_000; i++) await server.app.collectors.create(SYSTEM_ACTOR, { name: `${base}-${i}`, tags: { costly: base, blob: adversarial() } });
  const heavy = (gap: number) => `blob!~"(?:.*a.{${gap}}x|.*A.{${gap}}A|.*x.{${gap}}a)"`;
  const res = await server.api("/matchers/preview", { method: "POST", token: viewer, json: { matchers: [heavy(160), heavy(159), `costly="${base}"`] } });
  const { error } = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: error.code }).toEqual({ status: 422, code: "matchers_too_costly" });
  expect(error.message).toContain(`more than ${SCAN_BUDGET_MS / 1000} s`);
  expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
  const cheap = await server.api("/matchers/preview", { method: "POST", token: viewer, json: { matchers: [`costly="${base}"`], limit: 1 } });
  expect(((await cheap.json()) as { count: number }).count).toBe(2_000);
}, 120_000);

test("GET /collectors?match= and POST /collectors/tags refuse the same, naming match[i]", async () => {
  const list = await refused(await server.api(`/collectors?match=${encodeURIComponent(sized("zone", MAX_MATCHER_PROGRAM + 1))}`, { token: viewer }));
  expect({ status: list.status, paths: list.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["match[0]"] });
  const tags = await refused(
    await server.api("/collectors/tags", { method: "POST", json: { match: ["env=prod", sized("zone", MAX_MATCHER_PROGRAM + 1)], set: { x: "y" } } }),
  );
  expect({ status: tags.status, paths: tags.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["match[1]"] });
  const ok = await server.api(`/collectors?match=${encodeURIComponent('zone=~"a+"')}&limit=1`, { token: viewer });
  expect(ok.status).toBe(200);
});

test("a pipeline's matchers over either cap are a 400, and the stored matchers are unchanged", async () => {
  const pipeline = await server.call<{ id: string }>("/pipelines", "POST", { name: "bounded", signal: "logs", matchers: ['region=~"eu-.*"'] });
  const put = (matchers: string[]) => server.api(`/pipelines/${pipeline.id}`, { method: "PUT", json: { name: "bounded", signal: "logs", matchers } });
  const one = await refused(await put(["env=prod", ISSUE_MATCHER]));
  expect({ status: one.status, paths: one.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["matchers[1]"] });
  const total = await refused(await put(Array.from({ length: 3 }, (_, i) => sized(`k${i}`, MAX_MATCHER_PROGRAM))));
  expect({ status: total.status, paths: total.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["matchers"] });
  const created = await refused(await server.api("/pipelines", { method: "POST", json: { name: "too-big", signal: "logs", matchers: [ISSUE_MATCHER] } }));
  expect(created.status).toBe(400);
  expect((await server.call<{ matchers: string[] }>(`/pipelines/${pipeline.id}`)).matchers).toEqual(['region=~"eu-.*"']);
  expect((await server.call<{ items: { name: string }[] }>("/pipelines")).items.map((p) => p.name)).not.toContain("too-big");
});
