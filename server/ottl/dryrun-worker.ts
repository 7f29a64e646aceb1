/**
 * The worker side of dryrun-isolated.ts: one dry-run per worker, off the
 * server's event loop. It reports each processor as it starts (so a
 * terminated run can be named) and answers the result or a typed refusal.
 */
import { AppError } from "../errors.ts";
import type { DryRunReply, DryRunRequest } from "./dryrun-isolated.ts";
import { dryRun } from "./dryrun.ts";

declare const self: Worker;

const reply = (message: DryRunReply) => self.postMessage(message);

self.onmessage = ({ data }: MessageEvent<DryRunRequest>) => {
  try {
    const result = dryRun(JSON.parse(data.input), data.processors, data.budgetMs, (index) => reply({ kind: "step", index }));
    reply({ kind: "done", output: JSON.stringify(result.output), steps: result.steps });
  } catch (error) {
    if (error instanceof AppError) {
      reply({ kind: "refused", status: error.status, code: error.code, message: error.message, details: error.details });
    } else {
      reply({ kind: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  }
};
