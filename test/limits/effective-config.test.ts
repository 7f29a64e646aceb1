/**
 * Bounds on what a collector's effective-config reports cost (issue 33,
 * item 5), over a real OpAMP WebSocket and a real remote-config client: a
 * report over MAX_EFFECTIVE_CONFIG_BYTES is not kept — the last one kept
 * stays, and the refusal and its reason are shown beside it; reports past
 * the collector's rate are not looked at; reports of the largest size the
 * channel carries, one after another, do not grow the state file; reports
 * of a normal size are kept and judged for drift as before.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { MAX_MESSAGE_BYTES } from "../../server/opamp/channel.ts";
import { EFFECTIVE_CONFIG_RATE, MAX_EFFECTIVE_CONFIG_BYTES } from "../../server/rollout/effective-intake.ts";
import type { EffectiveConfig } from "../../shared/rollouts.ts";
import { description, RawAgent, until } from "../opamp/helpers.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const encoder = new TextEncoder();
/** An OpAMP EffectiveConfig of one file `""` holding `body`. */
const report = (body: string) => ({ effectiveConfig: { configMap: { configMap: { "": { body: encoder.encode(body), contentType: "text/yaml" } } } } });
/** YAML of about `bytes` bytes. */
const yamlOf = (bytes: number, salt = "") => `# ${salt}\nextensions:\n  x:\n${"    k: v\n".repeat(Math.ceil(bytes / 9))}`;

async function connected(name: string): Promise<{ id: string; agent: RawAgent }> {
  const { id } = await server.call<{ id: string }>("/collectors", "POST", { name });
  const { token } = await server.call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST");
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await agent.call({ agentDescription: description({ "service.name": name }) });
  return { id, agent };
}

const effective = async (id: string) => (await server.call<EffectiveConfig>(`/collectors/${id}/effective-config`)).effective;

describe("over OpAMP", () => {
  test("a report over the cap is refused with its reason, and the last one kept stays", async () => {
    const { id, agent } = await connected("big-reporter");
    try {
      const normal = yamlOf(10_000, "normal");
      await agent.call(report(normal));
      await until(async () => (await effective(id))?.files[0]?.body === normal);

      await agent.call(report(yamlOf(MAX_EFFECTIVE_CONFIG_BYTES + 1024, "big")));
      const refused = await until(async () => {
        const shown = await effective(id);
        return shown?.refused ? shown : null;
      });
      expect(refused.refused!.reason).toContain(`more than the ${MAX_EFFECTIVE_CONFIG_BYTES} svc keeps`);
      expect(refused.files.map((f) => f.body)).toEqual([normal]);
    } finally {
      agent.close();
    }
  });

  test(`past ${EFFECTIVE_CONFIG_RATE.burst} reports at once a collector's reports are not looked at`, async () => {
    const { id, agent } = await connected("chatty-reporter");
    try {
      let last = "";
      for (let i = 0; i < EFFECTIVE_CONFIG_RATE.burst; i++) {
        last = yamlOf(1000, `report ${i}`);
        await agent.call(report(last));
        const expected = last;
        await until(async () => (await effective(id))?.files[0]?.body === expected);
      }
      // The reply comes after the handler decided; a report it took would be written in the background, so
      // the answer is watched a while (a busy machine can only make this pass, never fail, wrongly).
      await agent.call(report(yamlOf(1000, "one too many")));
      for (let i = 0; i < 20; i++, await Bun.sleep(25)) expect((await effective(id))?.files[0]?.body).toBe(last);
    } finally {
      agent.close();
    }
  });

  test("reports as large as a message may be, one after another from several collectors, do not grow the state file", async () => {
    const state = join(server.dir, "state.db");
    const size = () => [state, `${state}-wal`].reduce((sum, file) => sum + (statSync(file, { throwIfNoEntry: false })?.size ?? 0), 0);
    const agents = await Promise.all(Array.from({ length: 3 }, (_, i) => connected(`flooder-${i}`)));
    try {
      const huge = yamlOf(MAX_MESSAGE_BYTES - 64 * 1024, "huge");
      // Each refused with a small write while the rate lasts, then not looked at.
      for (const { agent } of agents) await agent.call(report(huge));
      for (const { id } of agents) await until(async () => (await effective(id))?.refused);
      const before = size();
      for (let round = 0; round < 4; round++) for (const { agent } of agents) await agent.call(report(huge));
      for (const { id } of agents) expect((await effective(id))?.files).toEqual([]);
      // Twelve reports of ~4 MiB: kept, they would add ~48 MiB; refused, the state grows by none of them.
      expect(size() - before).toBeLessThan(MAX_EFFECTIVE_CONFIG_BYTES);
    } finally {
      for (const { agent } of agents) agent.close();
    }
  }, 60_000);
});

test("over remote config, a report over the cap is refused with its reason; a normal one is kept", async () => {
  const { id } = await server.call<{ id: string }>("/collectors", "POST", { name: "alloy-reporter", managementMode: "rcfg-remotecfg" });
  const { token } = await server.call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST");
  const client = remoteConfigClient(server.base, token);
  const poll = (body: string) =>
    client.getConfig({ id, effectiveConfig: { configMap: { configMap: { "": { body: encoder.encode(body), contentType: "text/plain" } } } } });
  const normal = "// normal\n" + yamlOf(5000);
  await poll(normal);
  expect((await effective(id))?.files.map((f) => f.body)).toEqual([normal]);
  await poll(yamlOf(MAX_EFFECTIVE_CONFIG_BYTES + 1, "big"));
  const shown = await effective(id);
  expect(shown?.refused?.reason).toContain(`more than the ${MAX_EFFECTIVE_CONFIG_BYTES} svc keeps`);
  expect(shown?.files.map((f) => f.body)).toEqual([normal]);
});
