/**
 * Serves @connectrpc/connect universal handlers from the Fetch API, for
 * unary RPCs. Connect's own `universalServerRequestFromFetch` /
 * `universalServerResponseToFetch` pipe both bodies through ReadableStreams
 * and async iterators, which costs more than the RPC itself on a poll that
 * answers a few bytes; a unary message is read whole anyway, so this adapter
 * reads the request body once and answers the single response chunk as bytes.
 */
import { Code, ConnectError, type ContextValues, type Interceptor } from "@connectrpc/connect";
import type { Compression, UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { gunzip, gzip } from "node:zlib";
import { promisify } from "node:util";
import { AppError, PayloadTooLargeError } from "../errors.ts";
import { readBytes } from "../lib/body.ts";

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** gzip for the Connect router (the core package ships none; connect-node's is a client-side dependency here). */
export const compressionGzip: Compression = {
  name: "gzip",
  compress: async (bytes) => new Uint8Array(await gzipAsync(bytes)),
  decompress: async (bytes, readMaxBytes) => {
    if (bytes.byteLength === 0) return new Uint8Array(0);
    try {
      return new Uint8Array(await gunzipAsync(bytes, { maxOutputLength: Math.min(readMaxBytes, 2 ** 31 - 1) }));
    } catch (error) {
      const tooBig = (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE";
      throw new ConnectError(
        tooBig ? `message is larger than ${readMaxBytes} bytes uncompressed` : "invalid gzip data",
        tooBig ? Code.ResourceExhausted : Code.InvalidArgument,
      );
    }
  },
};

/** One chunk as the async iterable the universal handler reads. */
function once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      let done = false;
      return {
        next: () => {
          if (done) return Promise.resolve({ done: true, value: undefined });
          done = true;
          return Promise.resolve({ done: false, value: bytes });
        },
      };
    },
  };
}

const EMPTY = new Uint8Array(0);

export class UnaryFetchRouter {
  private readonly byPath = new Map<string, UniversalHandler>();

  constructor(
    handlers: readonly UniversalHandler[],
    /** Larger request bodies are refused (resource_exhausted) before they are read. */
    private readonly maxBodyBytes: number,
  ) {
    for (const h of handlers) {
      if (h.method.methodKind !== "unary") throw new Error(`${h.requestPath}: only unary RPCs are served over this adapter`);
      this.byPath.set(h.requestPath, h);
    }
  }

  /**
   * The handler's answer, or a Connect `unimplemented` error (HTTP 404) for an
   * unknown procedure. `contextValues` reach the handler context (what the
   * edge learned of the request before routing).
   */
  async handle(req: Request, pathname: string, contextValues?: ContextValues): Promise<Response> {
    const handler = this.byPath.get(pathname);
    if (!handler) return connectErrorResponse(new ConnectError(`${pathname} is not a procedure of this server`, Code.Unimplemented), 404);
    let body: Uint8Array = EMPTY;
    try {
      if (req.body !== null) body = await readConnectBody(req, this.maxBodyBytes);
    } catch (error) {
      if (!(error instanceof ConnectError)) throw error;
      return connectErrorResponse(error);
    }
    const uReq: UniversalServerRequest = {
      httpVersion: "1.1",
      method: req.method,
      url: req.url,
      header: req.headers,
      body: once(body),
      signal: req.signal,
      ...(contextValues ? { contextValues } : {}),
    };
    const uRes = await handler(uReq);
    // Response's own body type, not BodyInit: this file is typechecked without DOM types and, through the browser tests, with them.
    let out: ConstructorParameters<typeof Response>[0] | null = null;
    if (uRes.body !== undefined) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of uRes.body) chunks.push(chunk);
      out = chunks.length === 1 ? (chunks[0] as Uint8Array<ArrayBuffer>) : (Buffer.concat(chunks) as Uint8Array<ArrayBuffer>);
    }
    return new Response(out, { status: uRes.status, headers: uRes.header });
  }
}

const JSON_ERROR = { "Content-Type": "application/json" };

/**
 * A Connect unary error (`{"code": "unauthenticated", "message": …}`) with the
 * protocol's HTTP status for its code, or `status` when given (404 for an
 * unknown procedure, as Connect servers answer). Other errors are `internal`
 * and keep their message to the log.
 */
export function connectErrorResponse(error: unknown, status?: number): Response {
  const connectError = retryable(error) ?? (error instanceof ConnectError ? error : new ConnectError("internal error", Code.Internal));
  const headers = new Headers(JSON_ERROR);
  connectError.metadata.forEach((value, name) => headers.set(name, value));
  return new Response(errorToJsonBytes(connectError, {}) as Uint8Array<ArrayBuffer>, {
    status: status ?? codeToHttpStatus(connectError.code),
    headers,
  });
}

/**
 * A server-side refusal with Retry-After (503 storage down, 507 disk full) as
 * Connect `unavailable`, which collectors retry, carrying the Retry-After;
 * null for any other error.
 */
function retryable(error: unknown): ConnectError | null {
  if (!(error instanceof AppError) || error.status < 500 || error.headers["Retry-After"] === undefined) return null;
  return new ConnectError(error.message, Code.Unavailable, { "Retry-After": error.headers["Retry-After"] });
}

/** For the Connect router: a storage refusal thrown by a handler answers `unavailable` rather than `internal`. */
export const retryableRefusals: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (error) {
    throw retryable(error) ?? error;
  }
};

/** The request body, read under `limit` as it streams (a chunked body is cut there too); past it Connect's resource_exhausted. */
export async function readConnectBody(req: Request, limit: number): Promise<Uint8Array> {
  try {
    return await readBytes(req, limit);
  } catch (error) {
    if (error instanceof PayloadTooLargeError) throw new ConnectError(`request body exceeds ${limit} bytes`, Code.ResourceExhausted);
    throw error;
  }
}
