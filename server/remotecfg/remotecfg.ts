/**
 * Runtime R remote configuration (docs/architecture.md "Remote configuration"): the Connect-RPC service
 * `collector.v1.CollectorService` at `/collector.v1.CollectorService/…`,
 * Connect protocol with the binary (`application/proto`) and JSON
 * (`application/json`) codecs, and gRPC-web; gRPC proper is off (it needs
 * HTTP/2 trailers).
 *
 * Auth is the collector's own Bearer token (`svcct_`, minted by
 * `POST /collectors/{id}/otlp-token`): missing, Basic, unknown or rotated
 * away → `unauthenticated` (HTTP 401), checked before the body is read; a
 * valid token naming another collector than the request's `id` →
 * `permission_denied` (403).
 *
 * GetConfig answers the collector's published config and its hash, or
 * `not_modified` when the request already carries that hash. A status
 * (`remote_config_status`) stands until the collector sends another: Alloy
 * sends it only when it changes, so a config it loads after an earlier one
 * that applied comes with its hash and no status (its status is still
 * APPLIED). The last status each collector sent is kept (`remotecfg_status`),
 * so a restart or another replica reads the same. A FAILED that tells of a
 * failed fetch (Connect's error text: the server out of reach, a token
 * refused), not of a config, is no report on the config. The content
 * has the secrets in (Delivery.delivered; kept in memory only); the hash is
 * that of the redacted rendering, which Alloy treats as opaque and sends
 * back. While a secret the config names cannot be opened the answer is
 * `unavailable` and the collector keeps the config it runs. Before anything
 * is published to the collector the answer is empty content with hash "" (a
 * collector polling with no hash then gets `not_modified`). The poll is the
 * hot path: the token check, the target and its rendered bytes all come from
 * memory, and a poll that changes nothing writes nothing — presence coalesces
 * contacts, status reports are passed on only when they differ from the
 * stored config state, and an effective config only when it changed.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createConnectRouter, createContextKey, createContextValues } from "@connectrpc/connect";
import { createMethodSerializationLookup } from "@connectrpc/connect/protocol";
import type { Logger } from "pino";
import { CHANNEL_OF } from "../../shared/vocabulary.ts";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { boundReported, sameReported } from "../collectors/attributes.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { Presence } from "../collectors/presence.ts";
import type { CollectorTokens } from "../collectors/tokens.ts";
import { InsufficientStorageError, NotFoundError } from "../errors.ts";
import { BoundedMap } from "../lib/bounded-map.ts";
import {
  CollectorService,
  GetConfigRequestSchema,
  GetConfigResponseSchema,
  RemoteConfigStatuses,
  type GetConfigRequest,
  type GetConfigResponse,
  type RegisterCollectorRequest,
} from "../gen/collector/v1/collector_pb.ts";
import type { Channel, ChannelHealth, ChannelRequest } from "../channel/channel.ts";
import { channelCredential, type ChannelCredential } from "../channel/credential.ts";
import type { Delivery } from "../rollout/delivery.ts";
import type { CollectorConfig, ConfigReport, ConfigState, EffectiveConfig } from "../rollout/records.ts";
import type { RenderedConfig } from "../rollout/renderer.ts";
import { Coalescer } from "../store/coalesce.ts";
import type { Store } from "../store/store.ts";
import { compressionGzip, connectErrorResponse, readConnectBody, retryableRefusals, UnaryFetchRouter } from "./fetch-adapter.ts";

export const SERVICE_PATH = `/${CollectorService.typeName}/`;
const GET_CONFIG_PATH = `${SERVICE_PATH}GetConfig`;
const PROTO = "application/proto";
const JSON_CODEC = "application/json";
const PROTO_ANSWER: ResponseInit = { headers: { "Content-Type": PROTO } };
const JSON_ANSWER: ResponseInit = { headers: { "Content-Type": JSON_CODEC } };

/** Poll interval assumed until a collector's polls show its own (Alloy's default poll_frequency). */
export const DEFAULT_INTERVAL_SECONDS = 60;
/** Observed poll gaps are rounded up to one of these, so a jittery poller does not rewrite its interval. */
const INTERVAL_STEPS = [60, 120, 300, 600, 900, 1800, 3600];
/** GetConfig carries an effective config; anything larger is refused. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const REGISTRATIONS = "remotecfg_registrations";
/** How long a status report waits for others to share its write (a poll's answer waits for it too). */
const STATUS_WRITE_DELAY_MS = 50;
const STATUSES = "remotecfg_status";
const PLAINTEXT_REFUSED =
  "remote config carries a Bearer token, so it is served only over TLS (on this server or a trusted proxy that sets X-Forwarded-Proto: https) or to loopback peers";

/** What RegisterCollector last told us: `remotecfg_registrations/<collectorId>`. */
export interface Registration {
  collectorId: string;
  name: string;
  attributes: Record<string, string>;
  registeredAt: string;
}

/**
 * The remote config status a collector last sent: `remotecfg_status/<collectorId>`. It stands
 * for every later request until the collector sends another (Alloy sends one only when it changes:
 * grafana/alloy v1.18.1 internal/service/remotecfg/config_manager.go getRemoteConfigStatusForRequest).
 */
export interface StandingStatus {
  collectorId: string;
  /** The request hash it came with: the config it was about. */
  hash: string;
  state: ConfigReport["state"] | "unset";
  error: string | null;
  reportedAt: string;
}

/** The request's credential as the channel read it before routing. */
const CREDENTIAL = createContextKey<ChannelCredential>({ ok: false, refused: "missing" }, { description: "the request's Bearer token" });
/** The collector id the request's Bearer token belongs to, set by the request gate. */
const AUTHENTICATED = createContextKey<string | null>(null, { description: "collector id of the Bearer token" });

function unauthenticated(message: string): ConnectError {
  return new ConnectError(message, Code.Unauthenticated);
}

/** Per collector, what this process remembers between polls. */
interface PollMemo {
  lastPollMs: number;
  intervalSeconds: number;
  /** The collector's standing status as this process last saw it, with the hash it is about (null: none, or UNSET). */
  report: ConfigReport | null;
  /** The target hash whose standing status was read from the store (standing): read once per target, found or not. */
  standingRead: string | null;
  /** The attributes the last poll carried (raw, before bounding), so an unchanged poll skips the work. */
  attributes: { attributes: Record<string, string>; localAttributes: Record<string, string> } | null;
}

/** A poll body kept for reuse (decodePoll) is at most this long: id, hash, status and attributes fit; an effective config does not. */
const LAST_POLL_MAX_BYTES = 4096;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * GetConfig's JSON codec exactly as the Connect router runs it (its options: unknown fields ignored;
 * its errors: invalid_argument for a body that does not parse), so the direct path answers the same.
 */
const GET_CONFIG_JSON = createMethodSerializationLookup(CollectorService.method.getConfig, undefined, undefined, {
  readMaxBytes: MAX_BODY_BYTES,
  writeMaxBytes: 0xffffffff,
});

/** A GetConfig answer, and its encodings made once (JSON at the first JSON poll) and reused for every poll. */
interface Answer {
  message: GetConfigResponse;
  bytes: Uint8Array<ArrayBuffer>;
  json: Uint8Array<ArrayBuffer> | null;
}

function answer(init: { content: string; hash: string; notModified: boolean }): Answer {
  const message = create(GetConfigResponseSchema, init);
  return { message, bytes: toBinary(GetConfigResponseSchema, message) as Uint8Array<ArrayBuffer>, json: null };
}

function jsonOf(answer: Answer): Uint8Array<ArrayBuffer> {
  return (answer.json ??= GET_CONFIG_JSON.getO(false).serialize(answer.message) as Uint8Array<ArrayBuffer>);
}

/** Encoded `not_modified` answers kept, one per hash (about 100 bytes each): with attribute references, one per collector. */
const NOT_MODIFIED_KEPT = 100_000;

interface Answers {
  /** Built at the first poll that needs the content: it carries the secrets. */
  full: Answer | null;
}

const UNDELIVERABLE =
  "this collector's config names a secret the server cannot open now, so it is not sent (see the collector's config state on the server); keep running the current config and poll again";
const NOTHING_PUBLISHED = answer({ content: "", hash: "", notModified: true });
const EMPTY_CONFIG = answer({ content: "", hash: "", notModified: false });

/**
 * connect-go's error text, `<code>: <message>` or the code alone (connectrpc.com/connect v1.20.0
 * error.go Error, code.go String). Alloy reports a fetch that failed as FAILED with that text, for the
 * config it already holds (config_manager.go fetchLoadRemoteConfig → getErrorMessage): no verdict on
 * that config. A config that does not load fails with Alloy's diagnostics, `file:line:col: …`.
 */
const FAILED_FETCH =
  /^(canceled|unknown|invalid_argument|deadline_exceeded|not_found|already_exists|permission_denied|resource_exhausted|failed_precondition|aborted|out_of_range|unimplemented|internal|unavailable|data_loss|unauthenticated)(: |$)/;

/** The status a request sent: a report, "unset", or null when it sent none or told of a failed fetch. */
function statusOf(status: RemoteConfigStatuses, hash: string, errorMessage: string): ConfigReport | "unset" | null {
  if (status === RemoteConfigStatuses.RemoteConfigStatuses_UNSET) return "unset";
  if (status === RemoteConfigStatuses.RemoteConfigStatuses_FAILED && FAILED_FETCH.test(errorMessage)) return null;
  return reportOf(status, hash, errorMessage);
}

function reportOf(status: RemoteConfigStatuses, hash: string, errorMessage: string): ConfigReport | null {
  switch (status) {
    case RemoteConfigStatuses.RemoteConfigStatuses_APPLIED:
      return { hash, state: "applied" };
    case RemoteConfigStatuses.RemoteConfigStatuses_APPLYING:
      return { hash, state: "applying" };
    case RemoteConfigStatuses.RemoteConfigStatuses_FAILED:
      return { hash, state: "failed", error: errorMessage };
    default:
      return null;
  }
}

/** Whether a report would move the stored config state (Delivery.report ignores reports for other hashes). */
function moves(report: ConfigReport, target: { targetHash: string; state: ConfigState; error: string | null }): boolean {
  if (report.hash !== target.targetHash) return false;
  if (report.state === "applied") return target.state !== "current";
  if (report.state === "applying") return target.state !== "applying";
  return target.state !== "failed" || target.error !== (report.error || "the collector could not apply the config");
}

/**
 * Whether a report says the collector applied another config than its
 * target, one it was sent or fetched (applying or failed): it may have gone
 * back to an earlier one on its own (Delivery.report tells).
 */
function wentBack(report: ConfigReport, target: { targetHash: string; state: ConfigState; collectorRollback?: unknown }): boolean {
  return report.state === "applied" && report.hash !== target.targetHash && target.state !== "outdated" && target.collectorRollback === undefined;
}

function intervalFor(gapMs: number): number {
  const seconds = gapMs / 1000;
  for (const step of INTERVAL_STEPS) if (seconds <= step) return step;
  return INTERVAL_STEPS[INTERVAL_STEPS.length - 1]!;
}

function effectiveFiles(request: GetConfigRequest): EffectiveConfig["files"] | null {
  const map = request.effectiveConfig?.configMap?.configMap;
  if (!map) return null;
  const decoder = new TextDecoder();
  return Object.keys(map)
    .sort()
    .map((name) => ({ name, contentType: map[name]!.contentType, body: decoder.decode(map[name]!.body) }));
}

/** What the remote config channel uses. */
export interface RemoteConfigDeps {
  store: Store;
  logger: Logger;
  collectors: Collectors;
  collectorTokens: CollectorTokens;
  presence: Presence;
  /** What it may ask of the rollout (rollout/delivery.ts). */
  delivery: Delivery;
}

export class RemoteConfigService {
  private readonly memo = new Map<string, PollMemo>();
  private readonly answers = new WeakMap<RenderedConfig, Answers>();
  private readonly unchanged = new BoundedMap<string, Answer>(NOT_MODIFIED_KEPT);
  /** Per collector, its last poll's body (when small), its codec and that body decoded: see decodePoll. */
  private readonly lastPoll = new Map<string, { bytes: Uint8Array; binary: boolean; input: GetConfigRequest }>();
  private readonly router: UnaryFetchRouter;
  private readonly statusWrites: Coalescer<StandingStatus>;

  constructor(
    private readonly deps: RemoteConfigDeps,
    private readonly now: () => number = Date.now,
  ) {
    this.statusWrites = new Coalescer(deps.store, STATUSES, STATUS_WRITE_DELAY_MS, deps.logger);
    const connect = createConnectRouter({
      grpc: false,
      grpcWeb: true,
      connect: true,
      readMaxBytes: MAX_BODY_BYTES,
      acceptCompression: [compressionGzip],
      interceptors: [retryableRefusals],
      requestGate: async (ctx) => {
        ctx.values.set(AUTHENTICATED, await this.authenticate(ctx.values.get(CREDENTIAL)));
      },
    });
    connect.service(CollectorService, {
      getConfig: async (req, ctx) => (await this.getConfig(req, ctx.values.get(AUTHENTICATED))).message,
      registerCollector: (req, ctx) => this.register(req, ctx.values.get(AUTHENTICATED)),
      unregisterCollector: async (req, ctx) => {
        const id = this.authorize(ctx.values.get(AUTHENTICATED), req.id);
        this.memo.delete(id);
        this.lastPoll.delete(id);
        await this.deps.presence.gone(id);
        return {};
      },
    });
    this.router = new UnaryFetchRouter(connect.handlers, MAX_BODY_BYTES);
  }

  /**
   * Every call goes through the Connect router, except the poll itself in its
   * usual forms — an uncompressed Connect unary GetConfig POST in the binary
   * (`application/proto`) or JSON (`application/json`) codec — which takes a
   * direct path to the same implementation: Connect's generic machinery
   * (handler context, abort signals, async iterables) costs several times
   * what the poll does. The wire is the same either way: the message as the
   * body in the request's codec, errors as Connect JSON with their HTTP
   * status, the token checked before the body is read. Answers on that path
   * are never compressed (allowed by the protocol; a not_modified answer is a
   * few dozen bytes). Any other form (gzip, `charset` parameters, Connect
   * GET, gRPC-web) goes through the router. `direct: false` sends the poll
   * through the router too: the tests hold the two answers side by side.
   */
  handle(req: Request, pathname: string, credential: ChannelCredential, options: { direct?: boolean } = {}): Promise<Response> {
    if (options.direct !== false && pathname === GET_CONFIG_PATH && req.method === "POST") {
      const headers = req.headers;
      const encoding = headers.get("content-encoding");
      if (encoding === null || encoding === "identity") {
        const type = headers.get("content-type");
        if (type === PROTO || type === JSON_CODEC) return this.poll(req, credential, type === PROTO);
      }
    }
    return this.router.handle(req, pathname, createContextValues().set(CREDENTIAL, credential));
  }

  private async poll(req: Request, credential: ChannelCredential, binary: boolean): Promise<Response> {
    try {
      const owner = await this.authenticate(credential);
      const bytes = await readConnectBody(req, MAX_BODY_BYTES);
      const answer = await this.getConfig(this.decodePoll(owner, bytes, binary), owner);
      return binary ? new Response(answer.bytes, PROTO_ANSWER) : new Response(jsonOf(answer), JSON_ANSWER);
    } catch (error) {
      if (!(error instanceof ConnectError)) this.deps.logger.error({ err: error }, "remotecfg: GetConfig failed");
      return connectErrorResponse(error);
    }
  }

  /**
   * The poll's request, decoded. A collector sends the very same bytes poll after poll (its id, the
   * hash it runs, the same attributes), and decoding them was a fifth of a poll's own work: the last
   * small body of each collector (keyed by its token's collector) is kept with its decoded message,
   * and reused when the bytes are equal. The message is only read, never changed, by getConfig.
   */
  private decodePoll(owner: string, bytes: Uint8Array, binary: boolean): GetConfigRequest {
    const last = this.lastPoll.get(owner);
    if (last !== undefined && last.binary === binary && sameBytes(last.bytes, bytes)) return last.input;
    let input: GetConfigRequest;
    if (binary) {
      try {
        input = fromBinary(GetConfigRequestSchema, bytes);
      } catch (error) {
        throw new ConnectError(`cannot decode the GetConfigRequest: ${(error as Error).message}`, Code.InvalidArgument);
      }
    } else {
      input = GET_CONFIG_JSON.getI(false).parse(bytes) as GetConfigRequest;
    }
    if (bytes.byteLength <= LAST_POLL_MAX_BYTES) this.lastPoll.set(owner, { bytes, binary, input });
    else this.lastPoll.delete(owner);
    return input;
  }

  /** The collector id of a live collector token; runs before any body is read. */
  private async authenticate(credential: ChannelCredential): Promise<string> {
    if (!credential.ok) throw unauthenticated("a collector Bearer token is required (Authorization: Bearer svcct_…)");
    const collectorId = await this.deps.collectorTokens.verify(credential.token);
    if (collectorId === null) throw unauthenticated("the Bearer token is not a live collector token (unknown, rotated or revoked)");
    return collectorId;
  }

  /** The request's collector id, once it is the token's own. */
  private authorize(owner: string | null, id: string): string {
    if (owner === null) throw unauthenticated("a collector Bearer token is required");
    if (id === "") throw new ConnectError("id is required: the collector id from the bootstrap file", Code.InvalidArgument);
    if (id !== owner) throw new ConnectError(`this token belongs to another collector than ${id}`, Code.PermissionDenied);
    return id;
  }

  private async getConfig(req: GetConfigRequest, owner: string | null): Promise<Answer> {
    const id = this.authorize(owner, req.id);
    const collector = await this.deps.collectors.get(id).catch((error) => {
      if (error instanceof NotFoundError) throw unauthenticated("the collector of this token no longer exists");
      throw error;
    });
    if (CHANNEL_OF[collector.managementMode] !== "remotecfg") {
      throw new ConnectError(
        `collector ${id} is managed over OpAMP (managementMode ${collector.managementMode}); set managementMode rcfg-remotecfg to serve it remote config`,
        Code.FailedPrecondition,
      );
    }
    const memo = this.contact(id);
    const sent = req.remoteConfigStatus ? statusOf(req.remoteConfigStatus.status, req.hash, req.remoteConfigStatus.errorMessage) : null;
    // The collector's message may quote its config, secrets too: redacted before presence or the rollout keeps it.
    if (sent !== null && sent !== "unset" && sent.error) sent.error = await this.deps.delivery.redact(id, sent.error);
    if (sent !== null) {
      memo.report = sent === "unset" ? null : sent;
      await this.bookkeeping(id, () => this.keepStatus(id, req.hash, sent));
    }
    const target = await this.deps.delivery.targetOf(id);
    const known = memo.report !== null && memo.report.hash === req.hash ? memo.report : sent === null ? await this.standing(id, memo, req.hash, target) : null;
    // Awaited: presence decides "changed" against the stored record, so a
    // collector's next poll must not overtake this one's write. A poll that
    // changes nothing resolves at once, from memory.
    await this.bookkeeping(id, () =>
      this.deps.presence.seen(id, {
        channel: "remotecfg",
        intervalSeconds: memo.intervalSeconds,
        ...(known?.state === "failed"
          ? { error: known.error || "the collector could not apply the config" }
          : known?.state === "applied"
            ? { error: null }
            : {}),
      }),
    );

    // A poll carries the collector's attributes (Alloy's remotecfg `attributes` argument, sent on
    // every GetConfig); kept when they differ from the last poll's, so an unchanged poll writes nothing.
    // Empty maps are no report (proto3 cannot tell them from absent): what was kept stays.
    if (Object.keys(req.attributes).length + Object.keys(req.localAttributes).length > 0) {
      const last = memo.attributes;
      if (last === null || !sameReported(last.attributes, req.attributes) || !sameReported(last.localAttributes, req.localAttributes)) {
        if (await this.bookkeeping(id, () => this.deps.collectors.report(SYSTEM_ACTOR, id, reportedOf(req)))) {
          memo.attributes = { attributes: req.attributes, localAttributes: req.localAttributes };
        }
      }
    }

    // Alloy sends it with every poll: one equal to the last kept costs nothing (effective-intake.ts), and
    // one not looked at (over the collector's rate) is taken from a later poll.
    const files = effectiveFiles(req);
    if (files !== null) await this.bookkeeping(id, () => this.deps.delivery.setEffective(id, files));

    if (target === null) return req.hash === "" ? NOTHING_PUBLISHED : EMPTY_CONFIG;
    if (known !== null && (moves(known, target) || wentBack(known, target))) await this.bookkeeping(id, () => this.deps.delivery.report(id, known));
    // Most polls end here, from memory: the collector runs its target (with attribute references every
    // collector's bytes are its own, too many to keep), or went back from it on its own and is not sent
    // it again until a retry or a new one.
    if (req.hash === target.targetHash || target.collectorRollback) return this.notModified(target.targetHash);
    const current = await this.deps.delivery.target(id);
    if (current === null) return req.hash === "" ? NOTHING_PUBLISHED : EMPTY_CONFIG;
    const { rendered } = current;
    if (req.hash === rendered.hash) return this.notModified(rendered.hash);
    const answers = this.answersFor(rendered);
    if (answers.full === null) {
      const content = await this.deps.delivery.delivered(id, rendered);
      if (content === null) throw new ConnectError(UNDELIVERABLE, Code.Unavailable);
      answers.full = answer({ content, hash: rendered.hash, notModified: false });
    }
    await this.bookkeeping(id, () => this.deps.delivery.fetched(id, rendered.hash));
    return answers.full;
  }

  /**
   * Keeps the status a request sent as the collector's standing one; writes only when it changed.
   * A fleet reports a new config's status in a wave (each poller on the poll after it took it):
   * the writes are coalesced, one transaction per tick, and the poll is answered once its own is stored.
   */
  private keepStatus(id: string, hash: string, sent: ConfigReport | "unset"): Promise<void> {
    const state = sent === "unset" ? "unset" : sent.state;
    const error = sent === "unset" ? null : (sent.error ?? null);
    const reportedAt = new Date(this.now()).toISOString();
    return this.statusWrites.update(id, (stored) =>
      stored && stored.hash === hash && stored.state === state && stored.error === error ? null : { collectorId: id, hash, state, error, reportedAt },
    );
  }

  /**
   * The collector's standing status taken for a request that sent none and
   * polls with its target's hash, while that target awaits its verdict: Alloy
   * loaded it and its status did not change. Read from the store, where every
   * replica keeps what it was sent, once per target for this process.
   */
  private async standing(id: string, memo: PollMemo, hash: string, target: CollectorConfig | null): Promise<ConfigReport | null> {
    if (target === null || hash === "" || hash !== target.targetHash || target.collectorRollback) return null;
    if (target.state !== "outdated" && target.state !== "applying") return null;
    // Nothing stood for this target when it was read: a status the collector sends later comes with its request (memo.report).
    if (memo.standingRead === hash) return null;
    memo.standingRead = hash;
    const stored = (await this.deps.store.get<StandingStatus>(STATUSES, id))?.data;
    if (!stored || stored.state === "unset") return null;
    memo.report = stored.state === "failed" ? { hash, state: "failed", error: stored.error ?? "" } : { hash, state: stored.state };
    return memo.report;
  }

  /**
   * Runs a poll's bookkeeping write (presence, reports, effective config).
   * A full disk refuses it, but the collector still gets its config: the poll
   * is a read, and the next poll after space is freed records the state.
   * Answers whether it was stored.
   */
  private async bookkeeping(id: string, write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (!(error instanceof InsufficientStorageError)) throw error;
      this.deps.logger.warn({ collectorId: id, err: error }, "remotecfg: the disk is full; serving the poll without recording it");
      return false;
    }
  }

  private async register(req: RegisterCollectorRequest, owner: string | null): Promise<Record<string, never>> {
    const id = this.authorize(owner, req.id);
    await this.deps.collectors.get(id).catch((error) => {
      if (error instanceof NotFoundError) throw unauthenticated("the collector of this token no longer exists");
      throw error;
    });
    const memo = this.contact(id);
    await this.deps.presence.seen(id, { channel: "remotecfg", intervalSeconds: memo.intervalSeconds });
    const attributes = { ...req.attributes, ...req.localAttributes };
    await this.deps.collectors.report(SYSTEM_ACTOR, id, reportedOf(req));
    memo.attributes = { attributes: req.attributes, localAttributes: req.localAttributes };
    const stored = await this.deps.store.get<Registration>(REGISTRATIONS, id);
    if (!stored || stored.data.name !== req.name || JSON.stringify(stored.data.attributes) !== JSON.stringify(attributes)) {
      const data: Registration = { collectorId: id, name: req.name, attributes, registeredAt: new Date(this.now()).toISOString() };
      await this.deps.store.write([{ op: "put", collection: REGISTRATIONS, id, data, expect: stored?.version ?? "absent" }]);
    }
    return {};
  }

  /** Stores the statuses still queued. */
  close(): Promise<void> {
    return this.statusWrites.close();
  }

  /** What RegisterCollector last recorded for this collector, or null. */
  async registration(collectorId: string): Promise<Registration | null> {
    return (await this.deps.store.get<Registration>(REGISTRATIONS, collectorId))?.data ?? null;
  }

  /** Notes a poll; the interval follows the gaps between polls (first contact: the default). */
  private contact(id: string): PollMemo {
    const now = this.now();
    let memo = this.memo.get(id);
    if (!memo) {
      memo = { lastPollMs: now, intervalSeconds: DEFAULT_INTERVAL_SECONDS, report: null, standingRead: null, attributes: null };
      this.memo.set(id, memo);
      return memo;
    }
    memo.intervalSeconds = intervalFor(now - memo.lastPollMs);
    memo.lastPollMs = now;
    return memo;
  }

  /** Response messages per rendered config, built once and reused for every poll. */
  private answersFor(rendered: RenderedConfig): Answers {
    let answers = this.answers.get(rendered);
    if (!answers) {
      answers = { full: null };
      this.answers.set(rendered, answers);
    }
    return answers;
  }

  /** The encoded `not_modified` answer for a hash, kept for the hashes polled most recently. */
  private notModified(hash: string): Answer {
    let known = this.unchanged.get(hash);
    if (!known) {
      known = answer({ content: "", hash, notModified: true });
      this.unchanged.set(hash, known);
    }
    return known;
  }
}

/**
 * A request's attributes as the collector record keeps them: local_attributes over the deprecated
 * attributes, bounded. Alloy sends, on RegisterCollector and on every GetConfig, its `remotecfg`
 * block's `attributes` over its own `collector.version` and `collector.os`, and refuses user keys in the
 * `collector.` namespace (grafana/alloy internal/service/remotecfg/remotecfg.go, commit c99a191d:
 * getSystemAttributes, Arguments.Validate, getAPIConfig); svc's virtual collector.id/name/mode do not
 * collide with those two, and a reported key by a virtual name is dropped (boundReported).
 */
function reportedOf(req: { attributes: Record<string, string>; localAttributes: Record<string, string> }): Record<string, string> {
  return boundReported(Object.entries({ ...req.attributes, ...req.localAttributes }));
}

/** The channel the edge routes `/collector.v1.CollectorService/…` to. */
export function remoteConfigChannel(deps: RemoteConfigDeps): Channel & { service: RemoteConfigService } {
  const service = new RemoteConfigService(deps);
  return {
    name: "remotecfg",
    path: SERVICE_PATH,
    service,
    handle: async (ctx: ChannelRequest) => {
      // Tokens never cross a network in the clear. A missing or unknown token is refused once the call is routed (an unknown procedure is a 404 first).
      const credential = channelCredential(ctx, "tls");
      if (!credential.ok && credential.refused === "plaintext") return connectErrorResponse(new ConnectError(PLAINTEXT_REFUSED, Code.PermissionDenied));
      return service.handle(ctx.req, ctx.url.pathname, credential);
    },
    health: (): ChannelHealth => ({ state: "up" }),
    stop: () => service.close(),
  };
}
