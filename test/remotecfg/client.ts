/**
 * Remote config (Runtime R) from a collector's side in tests: a Connect
 * client over HTTP/1.1 with the binary codec (or JSON), sending the
 * collector's token as a bearer; and the ConnectError a call is refused with.
 */
import { ConnectError, createClient, type Client } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport } from "@connectrpc/connect-node";
import { CollectorService } from "../../server/gen/collector/v1/collector_pb.ts";

/**
 * A remote-config client of the server at `base` that sends `Authorization: Bearer <token>`; `gzip`
 * compresses every request and accepts gzip answers; `json` speaks the JSON codec.
 */
export function remoteConfigClient(base: string, token: string, options: { gzip?: boolean; json?: boolean } = {}): Client<typeof CollectorService> {
  const transport = createConnectTransport({
    baseUrl: base,
    httpVersion: "1.1",
    useBinaryFormat: !options.json,
    ...(options.gzip ? { sendCompression: compressionGzip, acceptCompression: [compressionGzip], compressMinBytes: 0 } : {}),
    interceptors: [(next) => (req) => (req.header.set("Authorization", `Bearer ${token}`), next(req))],
  });
  return createClient(CollectorService, transport);
}

/** The ConnectError `promise` is rejected with; throws when it succeeds. */
export async function connectError(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("the call succeeded");
}
