/**
 * Connection settings offers on their own: what is offered to which agent,
 * and which token an offer may carry, against in-memory collector tokens and
 * enrollment. No server, no session beyond the instance's own state.
 */
import { describe, expect, test } from "bun:test";
import type { Logger } from "pino";
import { ConflictError } from "../errors.ts";
import { AgentCapabilities, type ConnectionSettingsOffers } from "../gen/opamp/v1/opamp_pb.ts";
import { Refused, type Credential } from "./credential.ts";
import { ConnectionSettings, type SettingsDeps } from "./settings.ts";
import { instance, recordedSession } from "../../test/opamp/helpers.ts";

const cap = (...caps: AgentCapabilities[]) => caps.reduce((all, c) => all | BigInt(c), 0n);
const HEARTBEAT = cap(AgentCapabilities.AgentCapabilities_ReportsHeartbeat);
const TAKES_SETTINGS = cap(AgentCapabilities.AgentCapabilities_AcceptsOpAMPConnectionSettings, AgentCapabilities.AgentCapabilities_ReportsHeartbeat);
const OWN_METRICS = cap(AgentCapabilities.AgentCapabilities_ReportsOwnMetrics);

const collectorToken = (token: string): Credential => ({ kind: "collector", collectorId: "c1", token });
const enrollmentToken: Credential = { kind: "enrollment", token: "svcen_a", tokenId: "e1", expiresAt: Date.now() + 60_000 };

/** One of c1's credentials in memory: its current token ("unopenable": sealed under a key this server lacks), and what minted it. */
function credential(prefix: string) {
  const state = {
    current: null as string | null | "unopenable",
    mints: 0,
    /** What a mint does instead of minting, when set. */
    mintFails: null as Error | null,
  };
  const tokens = {
    verify: async (token: string) => (token === state.current ? "c1" : null),
    current: async () => {
      if (state.current === "unopenable") throw new Error("sealed under another key");
      return state.current;
    },
    mint: async () => {
      state.mints++;
      await Bun.sleep(5);
      if (state.mintFails) throw state.mintFails;
      state.current = `${prefix}minted${state.mints}`;
      return { token: state.current, collectorId: "c1", createdAt: "" };
    },
  };
  return { state, tokens };
}

/** Settings over in-memory tokens for collector c1, with what they minted and logged. */
function world({ externalUrl = "https://svc.example.com", heartbeatSeconds = null as number | null } = {}) {
  const control = credential("svcct_");
  const metrics = credential("svccm_");
  const state = { enrollmentValid: true, errors: [] as unknown[] };
  const deps: SettingsDeps = {
    config: { externalUrl, opamp: { heartbeatSeconds } },
    collectorTokens: control.tokens,
    metricsTokens: metrics.tokens,
    enrollment: { opampToken: async () => null, usableForOpamp: async () => state.enrollmentValid },
    secrets: { keyId: "k1" },
    logger: { error: (...args: unknown[]) => void state.errors.push(args), warn: () => {} } as unknown as Logger,
  };
  return { settings: new ConnectionSettings(deps), state, control: control.state, metrics: metrics.state };
}

function agent(capabilities: bigint, persistent = false) {
  const i = instance(`u${Math.random()}`, "c1");
  i.capabilities = capabilities;
  // Over WebSocket the instance has its session; over HTTP none.
  if (persistent) i.session = recordedSession(enrollmentToken).session;
  return i;
}

const bearer = (offers: ConnectionSettingsOffers | undefined) => offers?.opamp?.headers?.headers.find((h) => h.key === "Authorization")?.value;

describe("offers", () => {
  test("an agent that takes no settings and reports no heartbeat is offered nothing, and its token is not looked up", async () => {
    const w = world({ heartbeatSeconds: 15 });
    w.control.current = "unopenable";
    w.metrics.current = "unopenable";
    expect(await w.settings.offer(agent(cap(AgentCapabilities.AgentCapabilities_ReportsStatus)), enrollmentToken)).toBeUndefined();
    expect(w.state.errors).toEqual([]);
  });

  test("the operator's heartbeat interval goes to an agent that reports heartbeats, without an endpoint or token, once", async () => {
    const w = world({ heartbeatSeconds: 15 });
    w.control.current = "svcct_one";
    const heartbeat = agent(HEARTBEAT);
    const offers = await w.settings.offer(heartbeat, enrollmentToken);
    expect(offers?.opamp?.heartbeatIntervalSeconds).toBe(15n);
    expect(offers?.opamp?.destinationEndpoint).toBe("");
    expect(offers?.opamp?.headers).toBeUndefined();
    expect(offers?.ownMetrics).toBeUndefined();
    expect(w.settings.offeredHeartbeat).toBe(15);
    expect(await w.settings.offer(heartbeat, enrollmentToken)).toBeUndefined();
  });

  test("an agent that takes settings gets the wss endpoint and its token; with no interval set, 0 over HTTP (it keeps its own) and opamp-go's 30 s over WebSocket", async () => {
    const w = world();
    w.control.current = "svcct_one";
    const overHttp = await w.settings.offer(agent(TAKES_SETTINGS), enrollmentToken);
    expect(overHttp?.opamp?.destinationEndpoint).toBe("wss://svc.example.com/v1/opamp");
    expect(bearer(overHttp)).toBe("Bearer svcct_one");
    expect(overHttp?.opamp?.heartbeatIntervalSeconds).toBe(0n);
    expect((await w.settings.offer(agent(TAKES_SETTINGS, true), enrollmentToken))?.opamp?.heartbeatIntervalSeconds).toBe(30n);
  });

  test("own metrics go to externalUrl's /v1/metrics with the metrics credential, not the control token; with no externalUrl there is nowhere to offer, and nothing is minted", async () => {
    const w = world();
    w.control.current = "svcct_one";
    w.metrics.current = "svccm_one";
    const offers = await w.settings.offer(agent(OWN_METRICS), enrollmentToken);
    expect(offers?.ownMetrics?.destinationEndpoint).toBe("https://svc.example.com/v1/metrics");
    expect(offers?.ownMetrics?.headers?.headers.map((h) => [h.key, h.value])).toEqual([["Authorization", "Bearer svccm_one"]]);
    expect(offers?.opamp).toBeUndefined();

    const nowhere = world({ externalUrl: "" });
    expect(await nowhere.settings.offer(agent(OWN_METRICS), enrollmentToken)).toBeUndefined();
    expect(nowhere.metrics.mints + nowhere.control.mints).toBe(0);
  });

  test("a changed token is a new offer to the same instance", async () => {
    const w = world();
    w.control.current = "svcct_one";
    const enrolled = agent(TAKES_SETTINGS);
    const first = await w.settings.offer(enrolled, enrollmentToken);
    w.control.current = "svcct_two";
    const second = await w.settings.offer(enrolled, enrollmentToken);
    expect(bearer(second)).toBe("Bearer svcct_two");
    expect(second!.hash).not.toEqual(first!.hash);
  });

  test("a rotated control token changes nothing offered for own metrics: an agent that takes no OpAMP settings is offered nothing new", async () => {
    const w = world();
    w.control.current = "svcct_one";
    w.metrics.current = "svccm_one";
    const supervised = agent(OWN_METRICS | HEARTBEAT, true);
    const both = agent(OWN_METRICS | TAKES_SETTINGS, true);
    const first = await w.settings.offer(both, enrollmentToken);
    expect(await w.settings.offer(supervised, enrollmentToken)).toBeDefined();
    w.control.current = "svcct_two";
    expect(w.settings.rotated("control", "c1")).toBe(true);
    expect(await w.settings.offer(supervised, enrollmentToken)).toBeUndefined();
    const second = await w.settings.offer(both, enrollmentToken);
    expect(bearer(second)).toBe("Bearer svcct_two");
    expect(second?.ownMetrics).toEqual(first?.ownMetrics);
  });
});

describe("token handling", () => {
  test("a collector token is offered itself only; once it is no longer the collector's, the offer is refused", async () => {
    const w = world();
    w.control.current = "svcct_one";
    const byToken = agent(TAKES_SETTINGS, true);
    expect(bearer(await w.settings.offer(byToken, collectorToken("svcct_one")))).toBe("Bearer svcct_one");
    w.control.current = "svcct_two";
    const refused = await w.settings.offer(agent(TAKES_SETTINGS, true), collectorToken("svcct_one")).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Refused);
    expect(refused).toMatchObject({ status: 401 });
  });

  test("an enrollment whose token ended is refused before the token goes out, and the offer is not counted as made", async () => {
    const w = world();
    w.control.current = "svcct_one";
    w.state.enrollmentValid = false;
    const enrolled = agent(TAKES_SETTINGS);
    expect(await w.settings.offer(enrolled, enrollmentToken).catch((e: unknown) => e)).toBeInstanceOf(Refused);
    expect(enrolled.sentSettings).toBeNull();
  });

  test("a collector with no token gets each minted for the offer that carries it, once for concurrent offers, without a push for it", async () => {
    const w = world();
    expect(bearer(await w.settings.offer(agent(TAKES_SETTINGS), enrollmentToken))).toBe("Bearer svcct_minted1");
    expect([w.control.mints, w.metrics.mints]).toEqual([1, 0]);

    const mint = w.settings.offer(agent(OWN_METRICS), enrollmentToken);
    await Bun.sleep(1);
    const rotatedDuringMint = w.settings.rotated("metrics", "c1");
    const offers = await Promise.all([mint, w.settings.offer(agent(OWN_METRICS), enrollmentToken)]);
    expect([w.control.mints, w.metrics.mints]).toEqual([1, 1]);
    expect(offers.map((o) => o?.ownMetrics?.headers?.headers[0]?.value)).toEqual(["Bearer svccm_minted1", "Bearer svccm_minted1"]);
    expect(rotatedDuringMint).toBe(false);
    expect(w.settings.rotated("metrics", "c1")).toBe(true);
  });

  test("a mint that lost to another replica's offers that replica's token", async () => {
    const w = world();
    w.metrics.mintFails = new ConflictError("rotated at the same time");
    const offer = w.settings.offer(agent(OWN_METRICS), enrollmentToken);
    await Bun.sleep(1);
    w.metrics.current = "svccm_theirs";
    expect((await offer)?.ownMetrics?.headers?.headers[0]?.value).toBe("Bearer svccm_theirs");
  });

  test("a stored token this server's key cannot open is not replaced, and logged once until the token is rotated", async () => {
    const w = world();
    w.metrics.current = "unopenable";
    expect(await w.settings.offer(agent(OWN_METRICS), enrollmentToken)).toBeUndefined();
    expect(await w.settings.offer(agent(OWN_METRICS), enrollmentToken)).toBeUndefined();
    expect(w.metrics.mints).toBe(0);
    expect(w.state.errors).toHaveLength(1);
    expect(w.settings.rotated("metrics", "c1")).toBe(true);
    await w.settings.offer(agent(OWN_METRICS), enrollmentToken);
    expect(w.state.errors).toHaveLength(2);
  });
});
