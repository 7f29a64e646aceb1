/**
 * The worker side of drift-isolated.ts: compares one effective config with
 * its target (drift.ts) off the server's event loop, and answers the drift.
 */
import { configDrift } from "./drift.ts";
import type { DriftReply, DriftRequest } from "./drift-isolated.ts";

declare const self: Worker;

self.onmessage = ({ data }: MessageEvent<DriftRequest>) => {
  let reply: DriftReply;
  try {
    reply = { kind: "done", drift: configDrift(data.runtime, data.target, data.files) };
  } catch (error) {
    reply = { kind: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  self.postMessage(reply);
};
