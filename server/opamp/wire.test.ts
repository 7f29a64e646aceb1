import { expect, test } from "bun:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { AgentDescriptionSchema, AgentToServerSchema, ComponentHealthSchema, ServerToAgentSchema } from "../gen/opamp/v1/opamp_pb.ts";
import { encodeServerToAgent, frame, instanceUidOf, RemoteConfigCache, serverToAgent, unframe } from "./wire.ts";

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

test("instance_uid is read from an AgentToServer's bytes wherever it stands among the other fields, without decoding them", () => {
  const uid = new Uint8Array([0xaa, 0xbb, 0xcc]);
  const full = create(AgentToServerSchema, {
    instanceUid: uid,
    sequenceNum: 300n,
    capabilities: 5n,
    agentDescription: create(AgentDescriptionSchema, {}),
    health: create(ComponentHealthSchema, { healthy: true, startTimeUnixNano: 1n }),
  });
  const bytes = toBinary(AgentToServerSchema, full);
  expect([...instanceUidOf(bytes)]).toEqual([...uid]);
  // Fields before it (hand-placed: the encoder writes field 1 first), and a truncated tail.
  const reordered = new Uint8Array([0x10, 0xac, 0x02, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 3, 0xaa, 0xbb, 0xcc, 0x22, 0x40]);
  expect([...instanceUidOf(reordered)]).toEqual([...uid]);
  expect(instanceUidOf(new Uint8Array([0x0a, 9, 1]))).toHaveLength(0);
  expect(instanceUidOf(new Uint8Array([0x10]))).toHaveLength(0);
});
