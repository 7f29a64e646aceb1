/**
 * No secret leaves the server except in the one answer that mints it. The
 * real server runs as a child process at logging.level trace; every
 * token-minting path is exercised (bootstrap admin, UI login session, service
 * account, enrollment tokens of each kind, snippet and bootstrap files,
 * collector token rotation, invite and reset links), each secret is used, in
 * calls that succeed and calls that fail (revoked, rotated out, wrong kind,
 * in a query string), and every GET route of the OpenAPI document is read.
 * Then:
 * - the whole stdout and stderr of both runs hold none of the secrets, nor
 *   their SHA-256 digests. The first-start banner prints the bootstrap admin
 *   token and the UI password once, on purpose (an operator has no other way
 *   to get in): exactly that block is cut out before the search, and it must
 *   be there exactly once;
 * - no GET answer holds a token (a kind prefix followed by secret material)
 *   or a digest of a minted token;
 * - the burst of 401s is in the audit log as one entry with its count.
 */
import { afterAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { api, bannerUiPassword, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";

afterAll(async () => {
  await killAll();
  removeTempDirs();
});

const TOKEN_PATTERN = /svc(?:sa|en|ct|cm|us|ul)_[0-9A-Za-z]{20,}/;
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Every secret the run saw, by where it came from. */
const secrets = new Map<string, string>();
function keep(label: string, secret: string | undefined | null): string {
  if (!secret) throw new Error(`no secret for ${label}`);
  secrets.set(label, secret);
  return secret;
}

function tokenIn(label: string, text: string): string {
  const match = TOKEN_PATTERN.exec(text);
  return keep(label, match?.[0]);
}

async function must<T = Record<string, unknown>>(res: Promise<Response>, status: number): Promise<T> {
  const r = await res;
  const text = await r.text();
  if (r.status !== status) throw new Error(`${r.url} → ${r.status}, wanted ${status}: ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

/** The banner block as main.ts writes it in one piece: from the serving line to the UI login lines (which never hold the password). */
function cutBanner(stdout: string, adminToken: string): string {
  const start = stdout.search(/^svc \S+ is serving at /m);
  const endMarker = "then delete the file)\n";
  const end = stdout.indexOf(endMarker, start);
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  const block = stdout.slice(start, end + endMarker.length);
  expect(block).toContain(adminToken);
  return stdout.slice(0, start) + stdout.slice(end + endMarker.length);
}

test("no minted secret reaches the logs or a later answer, and a 401 burst is audited once", async () => {
  const dir = tempDir("svc-secrets-");
  const statePath = join(dir, "state.db");
  const env = { SVC_LOGGING_LEVEL: "trace", SVC_EXTERNALURL: "https://svc.example.com/" };
  const first: ServerProcess = await startServer({ statePath, env });
  const base = first.base;
  const admin = keep("bootstrap admin", first.bannerToken);
  const password = keep("UI password", bannerUiPassword(first.stdout()));

  // UI login: the session cookie and its CSRF token.
  const login = await fetch(`${base}/api/v1/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: "admin", password }),
  });
  expect(login.status).toBe(200);
  const cookie = keep("UI session", /svc_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")?.[1]);
  const csrf = keep("CSRF token", ((await login.json()) as { csrfToken: string }).csrfToken);
  const asUser = (path: string, init: RequestInit = {}) =>
    fetch(`${base}/api/v1${path}`, {
      ...init,
      headers: { Cookie: `svc_session=${cookie}`, "X-CSRF-Token": csrf, "Content-Type": "application/json", ...init.headers },
    });
  expect((await asUser("/session")).status).toBe(200);
  expect((await asUser("/collectors", { method: "POST", body: JSON.stringify({ name: "by-cookie" }) })).status).toBe(201);
  expect((await asUser("/collectors", { method: "POST", body: "{}", headers: { "X-CSRF-Token": "wrong" } })).status).toBe(403);

  // A service account, used, then revoked and used again.
  const sa = await must<{ id: string; token: string }>(
    api(base, admin, "/service-accounts", { method: "POST", json: { name: "reader", scopes: ["collectors:read"] } }),
    201,
  );
  const saToken = keep("service account", sa.token);
  expect((await api(base, saToken, "/collectors")).status).toBe(200);
  expect((await api(base, saToken, "/users")).status).toBe(403);
  await must(api(base, admin, `/service-accounts/${sa.id}`, { method: "DELETE" }), 204);
  for (let i = 0; i < 6; i++) expect((await api(base, saToken, "/collectors")).status).toBe(401);

  // Enrollment tokens of each kind, plus the ones the snippet and bootstrap files mint.
  const opamp = await must<{ id: string; token: string }>(api(base, admin, "/enrollment-tokens", { method: "POST", json: { kind: "opamp" } }), 201);
  keep("opamp enrollment", opamp.token);
  const agent = await must<{ id: string; token: string }>(api(base, admin, "/enrollment-tokens", { method: "POST", json: { kind: "agent", maxUses: 3 } }), 201);
  keep("agent enrollment", agent.token);
  const snippet = await must<{ snippet: string }>(api(base, admin, "/collectors/snippet?agent=true", { method: "POST" }), 201);
  tokenIn("snippet enrollment", snippet.snippet);
  keep(
    "snippet agent enrollment",
    [...snippet.snippet.matchAll(new RegExp(TOKEN_PATTERN, "g"))].map((m) => m[0]).find((t) => !secrets.has(t) && t !== secrets.get("snippet enrollment")) ??
      null,
  );
  const files = await must<{ files: { body: string }[] }>(api(base, admin, "/bootstrap-files", { method: "POST", json: { token: opamp.token } }), 200);
  expect(files.files.map((f) => f.body).join("\n")).toContain(opamp.token);
  await must(api(base, admin, `/enrollment-tokens/${agent.id}`, { method: "DELETE" }), 204);

  // Collectors: an opamp one with its bootstrap files, an rcfg-remotecfg one whose token is rotated.
  const otelcol = await must<{ id: string }>(api(base, admin, "/collectors", { method: "POST", json: { name: "otelcol" } }), 201);
  const otelFiles = await must<{ files: { body: string }[] }>(api(base, admin, `/collectors/${otelcol.id}/bootstrap`, { method: "POST" }), 201);
  tokenIn("collector bootstrap enrollment", otelFiles.files.map((f) => f.body).join("\n"));
  const alloy = await must<{ id: string }>(api(base, admin, "/collectors", { method: "POST", json: { name: "alloy", managementMode: "rcfg-remotecfg" } }), 201);
  const oldCt = keep(
    "collector token 1",
    (await must<{ token: string }>(api(base, admin, `/collectors/${alloy.id}/otlp-token`, { method: "POST" }), 201)).token,
  );
  const newCt = keep(
    "collector token 2",
    (await must<{ token: string }>(api(base, admin, `/collectors/${alloy.id}/otlp-token`, { method: "POST" }), 201)).token,
  );
  const alloyFiles = await must<{ files: { body: string }[] }>(api(base, admin, `/collectors/${alloy.id}/bootstrap`, { method: "POST" }), 201);
  const ct = tokenIn("collector token 3", alloyFiles.files.map((f) => f.body).join("\n"));
  expect([oldCt, newCt]).not.toContain(ct);
  const getConfig = (token: string, query = "") =>
    fetch(`${base}/collector.v1.CollectorService/GetConfig${query}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ id: alloy.id }),
    });
  expect((await getConfig(ct)).status).toBe(200);
  expect((await getConfig(oldCt)).status).toBe(401);
  expect((await getConfig(opamp.token)).status).toBe(401); // wrong kind
  const metrics = (token: string) =>
    fetch(`${base}/v1/metrics`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` }, body: "{}" });
  expect((await metrics(ct)).status).toBeLessThan(300);
  expect((await metrics(newCt)).status).toBe(401);
  expect((await metrics(agent.token)).status).toBe(401);
  // The opamp collector's metrics credential, rotated: the new one pushes, the old one and the OpAMP channel refuse.
  const oldCm = keep(
    "metrics credential 1",
    (await must<{ token: string }>(api(base, admin, `/collectors/${otelcol.id}/metrics-token`, { method: "POST" }), 201)).token,
  );
  const cm = keep(
    "metrics credential 2",
    (await must<{ token: string }>(api(base, admin, `/collectors/${otelcol.id}/metrics-token`, { method: "POST" }), 201)).token,
  );
  expect((await metrics(cm)).status).toBeLessThan(300);
  expect((await metrics(oldCm)).status).toBe(401);
  expect(
    (
      await fetch(`${base}/v1/opamp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${cm}`, "Content-Type": "application/x-protobuf" },
        body: new Uint8Array(),
      })
    ).status,
  ).toBe(401);
  // Secrets in places they do not belong: a query string, a Basic header, the OpAMP channel.
  expect((await fetch(`${base}/api/v1/collectors?token=${ct}`)).status).toBe(401);
  expect((await fetch(`${base}/v1/bootstrap?token=${opamp.token}`)).status).toBeGreaterThanOrEqual(400);
  expect((await fetch(`${base}/api/v1/collectors`, { headers: { Authorization: `Basic ${btoa(`admin:${password}`)}` } })).status).toBe(401);
  expect(
    (
      await fetch(`${base}/v1/opamp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${agent.token}`, "Content-Type": "application/x-protobuf" },
        body: new Uint8Array([1, 2, 3]),
      })
    ).status,
  ).toBeGreaterThanOrEqual(400);
  expect((await api(base, ct, "/collectors")).status).toBe(401);

  // Users: an invite redeemed, a reset redeemed, and each link tried again.
  const invited = await must<{ user: { id: string }; inviteUrl: string }>(
    api(base, admin, "/users", { method: "POST", json: { username: "ann", email: "ann@example.com", role: "viewer" } }),
    201,
  );
  const invite = tokenIn("invite link", invited.inviteUrl);
  const annPassword = keep("invited user's password", `ann-${crypto.randomUUID()}`);
  const redeem = (path: string, token: string, pw: string) =>
    fetch(`${base}/api/v1${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token, password: pw }) });
  const annSession = await redeem("/session/invite", invite, annPassword);
  expect(annSession.status).toBe(200);
  keep("invited user's session", /svc_session=([^;]+)/.exec(annSession.headers.get("set-cookie") ?? "")?.[1]);
  keep("invited user's CSRF token", ((await annSession.json()) as { csrfToken: string }).csrfToken);
  expect((await redeem("/session/invite", invite, annPassword)).status).toBe(400);
  const reset = await must<{ resetUrl: string }>(api(base, admin, `/users/${invited.user.id}/password-reset`, { method: "POST" }), 201);
  const resetToken = tokenIn("reset link", reset.resetUrl);
  const annNewPassword = keep("reset password", `ann-${crypto.randomUUID()}`);
  expect((await redeem("/session/password-reset", resetToken, annNewPassword)).status).toBe(200);
  expect((await redeem("/session/password-reset", resetToken, annNewPassword)).status).toBe(400);
  const wrongLogin = await fetch(`${base}/api/v1/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username: "ann", password: annPassword }),
  });
  expect(wrongLogin.status).toBe(401);

  // Every GET route of the OpenAPI document: no token and no digest of one in any answer.
  const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const ids: Record<string, string> = { collectors: alloy.id, users: invited.user.id, "enrollment-tokens": opamp.id, "service-accounts": sa.id };
  // This GET mints a credential by design (kept for existing clients; POST is the same): the answer is where it is shown once.
  const minting = new Set(["/collectors/snippet"]);
  const digests = new Map([...secrets].map(([label, secret]) => [sha256(secret), label]));
  const readPaths: string[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!("get" in ops) || minting.has(path)) continue;
    const concrete = path.replace(/\{(\w+)\}/g, (_m, name: string, offset: number) => {
      if (name === "collectorId") return alloy.id;
      if (name === "seq") return "1";
      const segment = path.slice(0, offset).split("/").filter(Boolean).at(-1) ?? "";
      return ids[segment] ?? "x";
    });
    for (const [who, call] of [
      ["service account", () => api(base, admin, concrete, { signal: AbortSignal.timeout(5000) })],
      ["UI session", () => asUser(concrete, { signal: AbortSignal.timeout(5000) })],
    ] as const) {
      const res = await call();
      if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
        await res.body?.cancel();
        continue;
      }
      const text = await res.text();
      readPaths.push(`${who} GET ${concrete} ${res.status}`);
      expect({ path: concrete, who, leak: TOKEN_PATTERN.exec(text)?.[0] ?? null }).toEqual({ path: concrete, who, leak: null });
      const hex = [...text.matchAll(/[0-9a-f]{64}/g)].map((m) => digests.get(m[0])).filter(Boolean);
      expect({ path: concrete, who, digests: hex }).toEqual({ path: concrete, who, digests: [] });
    }
  }
  expect(readPaths.length).toBeGreaterThan(20);

  // A graceful stop audits the 401 burst; a second run reads it back.
  expect(await first.stop("SIGTERM")).toBe(0);
  const second = await startServer({ statePath, env });
  const audit = await must<{ items: { remoteAddr: string; resourceId: string; details: { count: number } }[] }>(
    api(second.base, admin, "/audit?action=auth.failure_burst"),
    200,
  );
  const burst = audit.items.find((e) => e.resourceId === "serviceAccount");
  expect(burst?.remoteAddr).toBe("127.0.0.1");
  expect(burst!.details.count).toBeGreaterThanOrEqual(6);
  expect(await second.stop("SIGTERM")).toBe(0);

  // The logs of both runs, banner cut out.
  const logs = [cutBanner(first.stdout(), admin), first.stderr(), second.stdout(), second.stderr()].join("\n");
  expect(logs.length).toBeGreaterThan(10_000); // trace level really logged the run
  expect(logs).not.toContain("First admin credential");
  const leaks: string[] = [];
  for (const [label, secret] of secrets) {
    if (logs.includes(secret)) leaks.push(label);
    if (logs.includes(sha256(secret))) leaks.push(`${label} (digest)`);
  }
  expect(leaks).toEqual([]);
  expect(secrets.size).toBe(21);
}, 60_000);
