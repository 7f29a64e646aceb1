/**
 * Reads request bodies under a size limit, without trusting Content-Length:
 * a chunked body is counted as it streams and cut at the limit; a gzip body
 * is bounded again after decompression, so a small bomb stays small.
 */
import { gunzipSync } from "node:zlib";
import { AppError, PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from "../errors.ts";

export async function readBytes(req: Request, limit: number): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new PayloadTooLargeError(limit);
  // A body framed by Content-Length alone (no chunked transfer coding) is exactly that long, and the
  // length is within the limit: Bun reads it natively in one go, without a stream reader's promise
  // per chunk (a collector's poll is a ~100-byte body, and most of its cost was that machinery), and
  // without making the body's ReadableStream at all (reading `req.body` does), hence before that test.
  if (declared !== null && /^\d+$/.test(declared) && req.headers.get("transfer-encoding") === null) return req.bytes();
  if (!req.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * The body as sent (`limit`) and, when it comes with `Content-Encoding: gzip`,
 * decompressed (`decompressedLimit`). Collector channels take gzip bodies;
 * any other encoding is 415.
 */
export async function readEncodedBytes(req: Request, limit: number, decompressedLimit: number): Promise<Uint8Array> {
  const encoding = (req.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") {
    throw new AppError(415, "unsupported_encoding", `Content-Encoding '${encoding}' is not accepted; send gzip or no encoding.`);
  }
  const bytes = await readBytes(req, limit);
  if (encoding === "identity") return bytes;
  try {
    return gunzipSync(bytes, { maxOutputLength: decompressedLimit });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) {
      throw new AppError(413, "payload_too_large", `The decompressed request body is larger than the limit of ${decompressedLimit} bytes.`);
    }
    throw new AppError(400, "malformed_body", `The request body is not valid gzip: ${(error as Error).message}`);
  }
}

/** The parsed JSON body (gzip accepted, bounded by the same limit once inflated), or undefined when the request has none. */
export async function readJson(req: Request, limit: number): Promise<unknown> {
  const bytes = await readEncodedBytes(req, limit, limit);
  if (bytes.byteLength === 0) return undefined;
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError("application/json");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ValidationError("The request body is not valid UTF-8.");
  }
  assertJsonDepth(bytes, "The request body");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AppError(400, "malformed_json", `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Deeper than any real body (OTLP values stop at 100 levels, ~400 in JSON),
 * shallow enough that the recursive code behind the API (schema checks,
 * clones, JSON.stringify) cannot overflow the stack: a 100,000-deep config was a 500.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * 400 too_deeply_nested when JSON `bytes` nest deeper than MAX_JSON_DEPTH.
 * Every channel that parses JSON checks it before parsing (REST bodies here,
 * agent messages in agents/channel.ts): a value that parses can still be too
 * deep to store, and would fail every write it shares.
 */
export function assertJsonDepth(bytes: Uint8Array, what: string): void {
  if (nestingDepth(bytes) > MAX_JSON_DEPTH) {
    throw new AppError(400, "too_deeply_nested", `${what} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`);
  }
}

/** The deepest `{`/`[` nesting of JSON bytes, brackets inside strings not counted; one pass, no parse. */
function nestingDepth(bytes: Uint8Array): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b || b === 0x5b) max = Math.max(max, ++depth);
    else if (b === 0x7d || b === 0x5d) depth--;
  }
  return max;
}
