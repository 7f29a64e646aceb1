/**
 * `/v1/metrics` (docs/architecture.md "Own metrics"): collectors push their internal
 * metrics over OTLP/HTTP, protobuf or JSON, gzip or not, with a Bearer
 * credential of their own: the metrics credential (`svccm_`) the OpAMP
 * own-metrics offer carries, or the collector token (`svcct_`) a Runtime R
 * bootstrap file carries (collectors/tokens.ts). Nothing is written to the store per push; the
 * points become rates in memory. The push is not presence: a collector's
 * status comes from its control channel, and this only notes when it last
 * reported metrics.
 *
 * Answers: 200 with `ExportMetricsServiceResponse` (with `partial_success`
 * when points were rejected) in the request's encoding; 405 not POST; 401 no,
 * non-Bearer or unknown token (checked before the body is read); 415 another
 * content type or encoding; 413 over the compressed or decompressed limit;
 * 400 a body that is not an export request. Errors carry a `google.rpc.Status`
 * in the request's encoding, as OTLP/HTTP asks.
 */
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import type { CollectorTokens } from "../collectors/tokens.ts";
import { readEncodedBytes } from "../lib/body.ts";
import type { Channel, ChannelHealth, ChannelRequest } from "../channel/channel.ts";
import { channelCredential } from "../channel/credential.ts";
import { AppError } from "../errors.ts";
import { ExportMetricsServiceResponseSchema } from "../gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.ts";
import { decodeJson, encodingOf, ingestMessage, ingestProtobuf, type Encoding } from "./intake.ts";
import type { ThroughputWindow } from "./window.ts";

export interface MetricsLimits {
  /** Largest body as sent (compressed or not). */
  maxBodyBytes: number;
  /** Largest body after gunzip. */
  maxDecompressedBytes: number;
}

export const DEFAULT_METRICS_LIMITS: MetricsLimits = { maxBodyBytes: 4 * 1024 * 1024, maxDecompressedBytes: 8 * 1024 * 1024 };

const CONTENT_TYPE: Record<Encoding, string> = { protobuf: "application/x-protobuf", json: "application/json" };
const EMPTY_PROTOBUF = toBinary(ExportMetricsServiceResponseSchema, create(ExportMetricsServiceResponseSchema));
/** gRPC codes for the Status body. */
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 405: 12, 413: 8, 415: 3, 500: 13 };

/** google.rpc.Status{code = 1, message = 2}, hand-encoded: two fields do not need a generated type. */
function statusProto(code: number, message: string): Uint8Array<ArrayBuffer> {
  const text = new TextEncoder().encode(message);
  const out: number[] = [0x08, code, 0x12];
  let n = text.length;
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  const bytes = new Uint8Array(out.length + text.length);
  bytes.set(out);
  bytes.set(text, out.length);
  return bytes;
}

function failure(status: number, message: string, encoding: Encoding, headers: Record<string, string> = {}): Response {
  const code = GRPC_CODE[status] ?? 2;
  // Response's own body type, not BodyInit: this file is typechecked without DOM types and, through the browser tests, with them.
  const body: ConstructorParameters<typeof Response>[0] = encoding === "protobuf" ? statusProto(code, message) : JSON.stringify({ code, message });
  return new Response(body, { status, headers: { "Content-Type": CONTENT_TYPE[encoding], ...headers } });
}

export class MetricsChannel implements Channel {
  readonly name = "metrics";
  readonly path = "/v1/metrics";

  constructor(
    private readonly deps: { collectorTokens: Pick<CollectorTokens, "verify">; metricsTokens: Pick<CollectorTokens, "verify"> },
    private readonly window: ThroughputWindow,
    private readonly limits: MetricsLimits = DEFAULT_METRICS_LIMITS,
  ) {}

  async handle(ctx: ChannelRequest): Promise<Response> {
    const { req } = ctx;
    // Errors before the body is understood answer in the encoding asked for, else JSON.
    const encoding = encodingOf(req.headers.get("content-type"));
    const answerAs = encoding ?? "json";
    if (req.method !== "POST") return failure(405, "Only POST is served at /v1/metrics.", answerAs, { Allow: "POST" });

    const credential = channelCredential(ctx, "any");
    const collectorId = credential.ok ? await this.collectorOf(credential.token) : null;
    if (collectorId === null) {
      return failure(401, "A valid per-collector Bearer token is required.", answerAs, { "WWW-Authenticate": 'Bearer realm="svc"' });
    }
    if (encoding === null) return failure(415, "The body must be application/x-protobuf or application/json.", "json");
    try {
      const bytes = await readEncodedBytes(req, this.limits.maxBodyBytes, this.limits.maxDecompressedBytes);
      const result = encoding === "protobuf" ? ingestProtobuf(this.window, collectorId, bytes) : ingestMessage(this.window, collectorId, decodeJson(bytes));
      if (result.rejected === 0) {
        return new Response(encoding === "protobuf" ? EMPTY_PROTOBUF : "{}", { headers: { "Content-Type": CONTENT_TYPE[encoding] } });
      }
      const response = create(ExportMetricsServiceResponseSchema, {
        partialSuccess: { rejectedDataPoints: BigInt(result.rejected), errorMessage: result.message },
      });
      const body: ConstructorParameters<typeof Response>[0] =
        encoding === "protobuf" ? toBinary(ExportMetricsServiceResponseSchema, response) : toJsonString(ExportMetricsServiceResponseSchema, response);
      return new Response(body, { headers: { "Content-Type": CONTENT_TYPE[encoding] } });
    } catch (error) {
      if (error instanceof AppError) return failure(error.status, error.message, encoding);
      ctx.log.error({ err: error, collectorId }, "metrics intake failed");
      return failure(500, "The server failed to take these metrics; see its log by request id.", encoding);
    }
  }

  /** The collector a metrics credential or collector token speaks for; null for anything else (each checks its own prefix first). */
  private async collectorOf(token: string): Promise<string | null> {
    return (await this.deps.metricsTokens.verify(token)) ?? (await this.deps.collectorTokens.verify(token));
  }

  health(): ChannelHealth {
    return { state: "up" };
  }
}
