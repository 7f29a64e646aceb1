/**
 * A fleet with one collector for each reason the dashboard's "Needs attention"
 * counts, made by what real OpAMP agents do over the real server: two fleet
 * publishes that `good` and `pinned` apply, `failing` fails the second,
 * `drifting` applies but reports running something else, `pinned` then rolled
 * back; `standalone` connects without AcceptsRemoteConfig, `gone` says goodbye,
 * and `nogw` lacks the attribute its pipeline's endpoint reads, so neither
 * publish can render it. The API and browser tests of the `attention` filter share it.
 */
import { parse, stringify } from "yaml";
import { create } from "@bufbuild/protobuf";
import {
  AgentCapabilities,
  AgentConfigMapSchema,
  AgentConfigObjectSchema,
  EffectiveConfigSchema,
  RemoteConfigStatuses,
} from "../server/gen/opamp/v1/opamp_pb.ts";
import type { AttentionReason } from "../shared/attention.ts";
import type { Dashboard } from "../shared/dashboard.ts";
import { matchedPipeline } from "./deployment.ts";
import type { TestServer } from "./harness.ts";
import { applied, description, RawAgent, until } from "./opamp/helpers.ts";

/** The collector of the fleet each reason holds, by name. */
export const EXPECTED: Record<AttentionReason, string[]> = {
  failed: ["failing"],
  offline: ["gone"],
  unrenderable: ["nogw"],
  pinned: ["pinned"],
  drifted: ["drifting"],
  reportingOnly: ["standalone"],
};

/** How long one agent waits for its config (a busy machine renders slowly). */
const OFFER_MS = 30_000;

function effective(body: string) {
  const file = create(AgentConfigObjectSchema, { body: new TextEncoder().encode(body), contentType: "text/yaml" });
  return create(EffectiveConfigSchema, { configMap: create(AgentConfigMapSchema, { configMap: { "": file } }) });
}

/** The same config with every exporter's endpoint elsewhere: what a drifted collector says it runs. */
function elsewhere(body: string): string {
  const config = parse(body) as { exporters: Record<string, Record<string, unknown>> };
  for (const exporter of Object.values(config.exporters)) exporter.endpoint = "https://elsewhere.example.net";
  return stringify(config);
}

/** Seeds the fleet; the agents are pushed onto `agents` for the caller to close. Returns each collector's id by name, once the dashboard counts every one. */
export async function seedAttentionFleet(server: TestServer, agents: RawAgent[]): Promise<Record<string, string>> {
  const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/one/*.log"] } });
  const gateway = await call<{ id: string }>("/destinations", "POST", { name: "gateway", type: "otlphttp", config: { endpoint: "https://otlp.example.com" } });
  await matchedPipeline(call, "fleet", source.id, gateway.id, ["fleet=yes"]);
  const gwSource = await call<{ id: string }>("/sources", "POST", { name: "gw-app", type: "filelog", config: { include: ["/var/log/gw.log"] } });
  const perCollector = await call<{ id: string }>("/destinations", "POST", {
    name: "per-collector",
    type: "otlphttp",
    config: { endpoint: '{{attr "gateway"}}' },
  });
  await matchedPipeline(call, "gw", gwSource.id, perCollector.id, ["gw=yes"]);
  await call("/commit", "POST", { message: "one" });

  const ids: Record<string, string> = {};
  for (const name of ["good", "failing", "drifting", "pinned", "standalone", "gone"]) {
    ids[name] = (await call<{ id: string }>("/collectors", "POST", { name, tags: { fleet: "yes" } })).id;
  }
  ids.nogw = (await call<{ id: string }>("/collectors", "POST", { name: "nogw", tags: { gw: "yes" } })).id;

  const connect = async (name: string, capabilities?: bigint) => {
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, ids[name]!);
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    agents.push(agent);
    await agent.call({ agentDescription: description({ "service.name": name }), ...(capabilities === undefined ? {} : { capabilities }) });
    return agent;
  };
  const managed = ["good", "failing", "drifting", "pinned"] as const;
  const agent: Record<string, RawAgent> = {};
  for (const name of managed) agent[name] = await connect(name);
  // Without the supervisor: reports, never takes remote config.
  await connect(
    "standalone",
    BigInt(AgentCapabilities.AgentCapabilities_ReportsStatus) |
      BigInt(AgentCapabilities.AgentCapabilities_ReportsEffectiveConfig) |
      BigInt(AgentCapabilities.AgentCapabilities_ReportsHealth),
  );
  const gone = await connect("gone");
  gone.send({ agentDisconnect: {} });
  await until(async () => (await server.app.collectors.get(ids.gone!)).status === "offline", OFFER_MS, 20, "gone to be offline");

  /** One publish: each managed agent answers the config it is offered as `answer` says. */
  const publish = async (answer: (name: string, body: string, hash: Uint8Array) => Parameters<RawAgent["call"]>[0]) => {
    const offers = managed.map((name) => agent[name]!.next((m) => m.remoteConfig !== undefined, OFFER_MS));
    await call("/publish", "POST");
    const offered = await Promise.all(offers);
    for (const [i, name] of managed.entries()) {
      const { config, configHash } = offered[i]!.remoteConfig!;
      await agent[name]!.call(answer(name, new TextDecoder().decode(config!.configMap[""]!.body), configHash));
    }
  };
  await publish((_, body, hash) => ({ remoteConfigStatus: applied(hash), effectiveConfig: effective(body) }));

  await call(`/sources/${source.id}`, "PUT", { name: "app", type: "filelog", config: { include: ["/var/log/two/*.log"] } });
  await call("/commit", "POST", { message: "two" });
  await publish((name, body, hash) => {
    if (name === "failing")
      return { remoteConfigStatus: applied(hash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "receiver filelog: permission denied") };
    return { remoteConfigStatus: applied(hash), effectiveConfig: effective(name === "drifting" ? elsewhere(body) : body) };
  });

  // pinned goes back to the first config, and stays there through fleet publishes.
  const rolledBack = agent.pinned!.next((m) => m.remoteConfig !== undefined, OFFER_MS);
  await call(`/collectors/${ids.pinned}/rollback`, "POST");
  const back = (await rolledBack).remoteConfig!;
  await agent.pinned!.call({
    remoteConfigStatus: applied(back.configHash),
    effectiveConfig: effective(new TextDecoder().decode(back.config!.configMap[""]!.body)),
  });

  await until(
    async () => {
      const d = await call<Dashboard>("/dashboard");
      return (Object.keys(EXPECTED) as AttentionReason[]).every((reason) => d[reason].count === EXPECTED[reason].length);
    },
    OFFER_MS,
    50,
    "the dashboard to count one collector under each reason",
  );
  return ids;
}
