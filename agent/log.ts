/**
 * The agent's log: JSON lines on stdout, which systemd puts in the journal
 * (the default), or appended to
 * `logging.file` when the operator asked for one. Lines carry pino's field
 * names and level numbers, so the same tools read the server's and the
 * agent's logs. Not pino itself: it costs the agent 2.8 MiB of its 40 MiB
 * idle budget for a few lines a day (BENCHMARKS.md, svc-agent).
 */
import { mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { AgentConfig } from "./types.ts";

type Level = AgentConfig["logging"]["level"];
type Write = (fields: Record<string, unknown> | string, message?: string) => void;
export type Logger = Record<Level, Write>;

const LEVELS: Record<Level, number> = { debug: 20, info: 30, warn: 40, error: 50 };

export function agentLogger(logging: AgentConfig["logging"]): Logger {
  let fd = 1;
  if (logging.file !== null) {
    mkdirSync(dirname(logging.file), { recursive: true });
    fd = openSync(logging.file, "a", 0o640);
  }
  const threshold = LEVELS[logging.level];
  const writer = (level: Level): Write => {
    const number = LEVELS[level];
    if (number < threshold) return () => {};
    return (fields, message) => {
      const [extra, msg] = typeof fields === "string" ? [{}, fields] : [fields, message];
      const line = { level: number, time: Date.now(), name: "svc-agent", ...serialize(extra), msg };
      writeSync(fd, `${JSON.stringify(line)}\n`);
    };
  };
  return { debug: writer("debug"), info: writer("info"), warn: writer("warn"), error: writer("error") };
}

/** Errors under `err` keep their type, message and stack, as pino's serializer does. */
function serialize(fields: Record<string, unknown>): Record<string, unknown> {
  const { err } = fields;
  if (!(err instanceof Error)) return fields;
  return { ...fields, err: { type: err.name, message: err.message, stack: err.stack } };
}
