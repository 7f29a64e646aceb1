/**
 * The client settings the OTLP exporters share on both runtimes: TLS,
 * compression, retries and the sending queue, as the collector's configtls,
 * configcompression, configretry and exporterhelper queue take them and as
 * Alloy's otelcol.exporter.otlp/otlphttp spell them (upstream/shared.ts).
 * Every field is optional and rendered only when set, so
 * an unset one keeps the upstream default, which both runtimes share
 * (compression gzip; retries on, 5s, 30s, 5m; queue on, 10 consumers, 1000
 * requests).
 */
import { OptionalKind, Type, type Static, type TOptional, type TUnsafe } from "@sinclair/typebox";
import { attr, block, type AlloyStatement } from "../alloy-syntax.ts";
import { parseGoDuration } from "../durations.ts";
import { Closed, Duration, HOST_PATH_REFERENCE, NoReferences, StringEnum } from "../schemas.ts";
import type { ErrorDetail } from "../../errors.ts";

/** A file the collector reads on its host (hostpaths.ts judges it as a source path is judged). */
const HostFile = (title: string, description: string) =>
  Type.Optional(
    NoReferences(
      Type.String({ minLength: 1, pattern: "^/\\S*$", errorMessage: "must be an absolute path on the collector's host", title, description }),
      HOST_PATH_REFERENCE,
    ),
  );

/** The TLS file keys, as configtls and Alloy's TLSSetting both name them. */
export const TLS_FILE_KEYS = ["ca_file", "cert_file", "key_file"] as const;

const tlsFields = {
  insecure_skip_verify: Type.Optional(Type.Boolean({ description: "Use TLS but do not verify the server's certificate." })),
  ca_file: HostFile("CA file", "CA certificate (PEM) that verifies the server, instead of the system roots."),
  cert_file: HostFile("Client certificate file", "Client certificate (PEM) for mutual TLS; needs key_file."),
  key_file: HostFile("Client key file", "Client private key (PEM) for mutual TLS; needs cert_file."),
  server_name_override: Type.Optional(
    Type.String({ minLength: 1, pattern: "^\\S+$", description: "Server name to verify the certificate against, when it differs from the endpoint's host." }),
  ),
};

/**
 * TLS of a gRPC exporter: `insecure` sends plaintext gRPC. An HTTP exporter
 * has no such switch (an http:// endpoint is plaintext, https:// is TLS).
 */
export const GrpcTls = () =>
  Closed({ insecure: Type.Boolean({ default: false, description: "Send without TLS (plaintext gRPC)." }), ...tlsFields }, { default: {}, title: "TLS" });
export const HttpTls = () => Closed(tlsFields, { default: {}, title: "TLS" });

/** configcompression types both exporters and Alloy's CompressionType accept (gRPC takes gzip, snappy and zstd). */
export const COMPRESSIONS = ["gzip", "zstd", "snappy", "none"] as const;
const Compression = () => Type.Optional(StringEnum(COMPRESSIONS, { description: "Compression of each request; unset is gzip, the exporters' default." }));

/** configretry.BackOffConfig defaults, which Alloy's RetryArguments.SetToDefault copies. */
export const RETRY_DEFAULTS = { initial_interval: "5s", max_interval: "30s", max_elapsed_time: "5m" } as const;

/** Type.Optional spreads the schema, dropping a duration's non-enumerable rule (schemas.ts): copied with its descriptors instead. */
function optionalDuration(description: string): TOptional<TUnsafe<string>> {
  const schema = Duration({ grammars: ["go"], description });
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as TUnsafe<string>;
  return Object.assign(copy, { [OptionalKind]: "Optional" }) as TOptional<TUnsafe<string>>;
}

const RetryOnFailure = () =>
  Closed(
    {
      enabled: Type.Boolean({ default: true, description: "Retry a failed export." }),
      initial_interval: optionalDuration("Wait after the first failure (default 5s)."),
      max_interval: optionalDuration("Longest wait between retries (default 30s)."),
      max_elapsed_time: optionalDuration("Give up on a batch after this long; 0 retries forever (default 5m)."),
    },
    { default: {}, title: "Retry on failure" },
  );

/** exporterhelper's queue_size is an int64; kept to what a JSON number holds exactly. */
const SendingQueue = () =>
  Closed(
    {
      enabled: Type.Boolean({ default: true, description: "Buffer batches in memory before sending." }),
      num_consumers: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: "Concurrent senders (default 10)." })),
      queue_size: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Requests the queue holds (default 1000)." })),
    },
    { default: {}, title: "Sending queue" },
  );

/** The schema fields an OTLP exporter adds for these settings. */
export function clientFields<T extends ReturnType<typeof GrpcTls> | ReturnType<typeof HttpTls>>(tls: T) {
  return { tls, compression: Compression(), retry_on_failure: RetryOnFailure(), sending_queue: SendingQueue() };
}

type Tls = Static<ReturnType<typeof HttpTls>> & { insecure?: boolean };
export interface ClientSettings {
  tls: Tls;
  compression?: (typeof COMPRESSIONS)[number];
  retry_on_failure: Static<ReturnType<typeof RetryOnFailure>>;
  sending_queue: Static<ReturnType<typeof SendingQueue>>;
}

/** No settings: the Loki destination, which has none of its own. */
export const NO_CLIENT_SETTINGS: ClientSettings = { tls: {}, retry_on_failure: { enabled: true }, sending_queue: { enabled: true } };

/**
 * Rules upstream's Validate() applies that the schema cannot: a client
 * certificate needs its key (configtls.Config.Validate), and retries must not
 * give up before their first wait (configretry.BackOffConfig.Validate, with
 * the defaults of unset fields).
 */
export function clientProblems(config: ClientSettings, root: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const { tls, retry_on_failure: retry } = config;
  if ((tls.cert_file === undefined) !== (tls.key_file === undefined)) {
    const missing = tls.cert_file === undefined ? "cert_file" : "key_file";
    problems.push({ path: `${root}.tls.${missing}`, message: "cert_file and key_file go together (mutual TLS needs both)" });
  }
  if (retry.enabled !== false) {
    const ns = (key: keyof typeof RETRY_DEFAULTS) => parseGoDuration(retry[key] ?? RETRY_DEFAULTS[key]) ?? 0n;
    const elapsed = ns("max_elapsed_time");
    for (const key of ["initial_interval", "max_interval"] as const) {
      if (elapsed > 0n && elapsed < ns(key)) {
        problems.push({
          path: `${root}.retry_on_failure.max_elapsed_time`,
          message: `must not be less than ${key} (${retry[key] ?? `${RETRY_DEFAULTS[key]} by default`}), or be 0 to retry forever`,
        });
        break;
      }
    }
  }
  return problems;
}

/** Only the keys that are set, in schema order. */
function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A retry or queue section as rendered: `enabled` only when off (on is both runtimes' default, and the form shows it checked). */
function section<T extends { enabled: boolean }>(value: T): Partial<T> {
  const { enabled, ...rest } = defined(value);
  return (enabled === false ? { enabled, ...rest } : rest) as Partial<T>;
}

const nonEmpty = (map: object) => Object.keys(map).length > 0;

/** The TLS keys that are set; `insecure` only when on (off is the default, and otlphttp has no such key). */
const tlsSet = (tls: Tls) => defined({ ...tls, insecure: tls.insecure === true ? true : undefined });

/** The otelcol exporter keys: `tls`, `compression`, `retry_on_failure`, `sending_queue`, each only when set. */
export function otelcolClient(config: ClientSettings): Record<string, unknown> {
  const tls = tlsSet(config.tls);
  const retry = section(config.retry_on_failure);
  const queue = section(config.sending_queue);
  return {
    ...(nonEmpty(tls) ? { tls } : {}),
    ...(config.compression !== undefined ? { compression: config.compression } : {}),
    ...(nonEmpty(retry) ? { retry_on_failure: retry } : {}),
    ...(nonEmpty(queue) ? { sending_queue: queue } : {}),
  };
}

/** Attributes of an Alloy block, one per set key, under Alloy's names. */
function attrs(values: Record<string, unknown>, rename: Record<string, string> = {}): AlloyStatement[] {
  return Object.entries(values).map(([key, value]) => attr(rename[key] ?? key, value as never));
}

/** What goes in Alloy's `client { … }` besides endpoint and headers: `compression` and a `tls` block. */
export function alloyClientMembers(config: ClientSettings): AlloyStatement[] {
  const tls = tlsSet(config.tls);
  return [
    ...(config.compression !== undefined ? [attr("compression", config.compression)] : []),
    // Alloy's TLSClientArguments calls configtls' server_name_override `server_name`.
    ...(nonEmpty(tls) ? [block("tls", undefined, attrs(tls, { server_name_override: "server_name" }))] : []),
  ];
}

/** Alloy's `retry_on_failure` and `sending_queue` blocks, each only when set. */
export function alloyExporterBlocks(config: ClientSettings): AlloyStatement[] {
  const retry = section(config.retry_on_failure);
  const queue = section(config.sending_queue);
  return [
    ...(nonEmpty(retry) ? [block("retry_on_failure", undefined, attrs(retry))] : []),
    ...(nonEmpty(queue) ? [block("sending_queue", undefined, attrs(queue))] : []),
  ];
}
