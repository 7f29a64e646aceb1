/** The two transports' connections: what each makes of a ServerToAgent, and what an HTTP exchange refuses to do. */
import { describe, expect, test } from "bun:test";
import { fromBinary } from "@bufbuild/protobuf";
import { gunzipSync } from "node:zlib";
import { ServerToAgentSchema } from "../gen/opamp/v1/opamp_pb.ts";
import type { ChannelSocket } from "../channel/channel.ts";
import { GZIP_MIN_BYTES, HttpConnection, socketConnection } from "./connection.ts";
import { SERVER_CAPABILITIES, serverToAgent } from "./wire.ts";

const small = () => serverToAgent({ instanceUid: new Uint8Array(16).fill(1), capabilities: SERVER_CAPABILITIES });
const large = () =>
  serverToAgent({ instanceUid: new Uint8Array(16).fill(1), capabilities: SERVER_CAPABILITIES, errorResponse: { errorMessage: "x".repeat(GZIP_MIN_BYTES) } });

describe("HTTP exchange", () => {
  test("its answer is the protobuf, gzipped only when large enough and accepted", async () => {
    const plain = new HttpConnection("gzip");
    plain.send(small());
    expect(plain.response.headers.get("content-encoding")).toBeNull();
    expect(plain.response.headers.get("content-type")).toBe("application/x-protobuf");
    expect(fromBinary(ServerToAgentSchema, new Uint8Array(await plain.response.arrayBuffer())).capabilities).toBe(SERVER_CAPABILITIES);

    const gzipped = new HttpConnection("br, gzip");
    gzipped.send(large());
    expect(gzipped.response.headers.get("content-encoding")).toBe("gzip");
    const body = gunzipSync(new Uint8Array(await gzipped.response.arrayBuffer()));
    expect(fromBinary(ServerToAgentSchema, body).errorResponse?.errorMessage).toHaveLength(GZIP_MIN_BYTES);

    const notAccepted = new HttpConnection(null);
    notAccepted.send(large());
    expect(notAccepted.response.headers.get("content-encoding")).toBeNull();
  });

  test("it is answered once: a second send, a close, or reading an answer never sent throw", () => {
    const http = new HttpConnection(null);
    expect(http.persistent).toBe(false);
    expect(() => http.response).toThrow();
    http.send(small());
    expect(() => http.send(small())).toThrow();
    expect(() => http.close()).toThrow();
  });
});

describe("WebSocket session", () => {
  test("each message is a frame (header 0, then the protobuf); a close closes the socket", () => {
    const frames: Uint8Array[] = [];
    const closes: [number, string][] = [];
    const ws = {
      getBufferedAmount: () => 0,
      sendBinary: (data: Uint8Array) => void frames.push(data),
      close: (code: number, reason: string) => void closes.push([code, reason]),
    };
    const connection = socketConnection(ws as unknown as ChannelSocket);
    expect(connection.persistent).toBe(true);
    connection.send(small());
    expect(frames[0]![0]).toBe(0);
    expect(fromBinary(ServerToAgentSchema, frames[0]!.subarray(1)).capabilities).toBe(SERVER_CAPABILITIES);
    connection.close(1008, "revoked");
    expect(closes).toEqual([[1008, "revoked"]]);
  });
});
