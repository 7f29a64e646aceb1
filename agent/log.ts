/**
 * The agent's log: JSON lines on stdout, which systemd puts in the journal
 * (the spec wants no flat-file logs by default), or appended to
 * `logging.file` when the operator asked for one.
 */
import pino, { type Logger } from "pino";
import type { AgentConfig } from "./types.ts";

export function agentLogger(logging: AgentConfig["logging"]): Logger {
  const destination = logging.file === null ? pino.destination({ fd: 1, sync: false }) : pino.destination({ dest: logging.file, append: true, mkdir: true, sync: true });
  return pino({ level: logging.level, base: { name: "svc-agent" } }, destination);
}
