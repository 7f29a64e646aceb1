/** The agent's JSON-line log: pino's field names and level numbers, the level threshold, errors kept readable. */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentLogger } from "./log.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-agent-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("logging.file: created with its directory, lines below the level left out, errors serialised", () => {
  const file = join(dir, "nested/agent.log");
  const log = agentLogger({ level: "info", file });
  log.debug("not written");
  log.info("plain message");
  log.warn({ url: "wss://svc.example.com/v1/agent", code: 1006 }, "disconnected");
  log.error({ err: new TypeError("bad thing") }, "discovery failed");
  const lines = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  expect(lines.map(({ time, ...rest }) => rest)).toEqual([
    { level: 30, name: "svc-agent", msg: "plain message" },
    { level: 40, name: "svc-agent", url: "wss://svc.example.com/v1/agent", code: 1006, msg: "disconnected" },
    { level: 50, name: "svc-agent", err: { type: "TypeError", message: "bad thing", stack: expect.stringContaining("bad thing") }, msg: "discovery failed" },
  ]);
  expect(lines.every((line) => typeof line.time === "number")).toBe(true);
  // 0640 at most (the umask may take more away): nobody else reads the agent's log.
  expect(statSync(file).mode & 0o137).toBe(0);
  // Appends: a second logger on the same file keeps what is there.
  agentLogger({ level: "debug", file }).debug("more");
  expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(4);
});
