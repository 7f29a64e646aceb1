import { expect, test } from "bun:test";
import { fromBinary } from "@bufbuild/protobuf";
import { ServerToAgentSchema } from "../gen/opamp/v1/opamp_pb.ts";
import { encodeServerToAgent, frame, RemoteConfigCache, serverToAgent, unframe } from "./wire.ts";

test("remote config bytes are encoded once per hash and spliced into any ServerToAgent", () => {
  const cache = new RemoteConfigCache(2);
  const hash = "ab".repeat(32);
  const bytes = cache.get(hash, "receivers: {}\n");
  expect(cache.get(hash, "ignored")).toBe(bytes);
  const message = fromBinary(ServerToAgentSchema, encodeServerToAgent(serverToAgent({ instanceUid: new Uint8Array([1, 2]), flags: 1n }), bytes));
  expect(message.flags).toBe(1n);
  expect(Buffer.from(message.remoteConfig!.configHash).toString("hex")).toBe(hash);
  const file = message.remoteConfig!.config!.configMap[""]!;
  expect(new TextDecoder().decode(file.body)).toBe("receivers: {}\n");
  expect(file.contentType).toBe("text/yaml");
  cache.get("cd".repeat(32), "a");
  cache.get("ef".repeat(32), "b");
  expect(cache.size).toBe(2);
});

test("frames carry header 0; other headers are refused", () => {
  expect([...unframe(frame(new Uint8Array([7, 8])))]).toEqual([7, 8]);
  expect(() => unframe(new Uint8Array([1, 7]))).toThrow(/header 1/);
  expect(() => unframe(new Uint8Array([0x80]))).toThrow(/varint/);
  expect(() => unframe(new Uint8Array([]))).toThrow(/varint/);
});
