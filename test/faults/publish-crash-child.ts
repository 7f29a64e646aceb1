/**
 * The process publish-kill9.test.ts kills: it opens the server's state as
 * svc-server does (the same SVC_* environment: the embedded state file, or
 * PostgreSQL), publishes the head commit through Rollouts with its writes cut
 * into slices of PUBLISH_WRITE_SLICE store operations, and sends itself
 * SIGKILL just before the slice after the first PUBLISH_CRASH_AFTER ones is
 * written: a real crash between two slices, nothing flushed or cleaned up.
 * Prints `slice <n>` before each slice, and `published <rolloutId>` when the
 * publish finished before the crash point (exit 0).
 * PUBLISH_STRATEGY, when set, is the JSON strategy of a staged publish.
 */
import pino from "pino";
import { gitDirFor, openConfigStore } from "../../server/app.ts";
import { Collectors } from "../../server/collectors/collectors.ts";
import { loadConfig } from "../../server/config/load.ts";
import { WRITES } from "../../server/rollout/records.ts";
import { Rollouts } from "../../server/rollout/rollout.ts";
import type { Strategy } from "../../server/rollout/strategy.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { SqliteStore } from "../../server/store/sqlite.ts";
import type { Store } from "../../server/store/store.ts";

const slice = Number(process.env.PUBLISH_WRITE_SLICE);
const crashAfter = Number(process.env.PUBLISH_CRASH_AFTER);
if (!(slice > 0) || !(crashAfter >= 0)) throw new Error("PUBLISH_WRITE_SLICE and PUBLISH_CRASH_AFTER must be set");
const strategy = process.env.PUBLISH_STRATEGY ? (JSON.parse(process.env.PUBLISH_STRATEGY) as Strategy) : undefined;

const config = loadConfig({ path: null, env: process.env });
const logger = pino({ level: "warn" });
const store: Store = config.storage.backend === "embedded" ? new SqliteStore(config.storage.boltPath) : await PostgresStore.open(config.database.uri);

/** The store as Rollouts sees it: every write that moves a publish's marker is a slice; the one after the last allowed never happens. */
let slices = 0;
const write: Store["write"] = (ops, audit) => {
  if (ops.some((op) => op.collection === WRITES)) {
    slices++;
    if (slices > crashAfter) process.kill(process.pid, "SIGKILL");
    process.stdout.write(`slice ${slices}\n`);
  }
  return store.write(ops, audit);
};
const crashing = new Proxy(store, {
  get(target, key) {
    if (key === "write") return write;
    const value: unknown = Reflect.get(target, key, target);
    return typeof value === "function" ? value.bind(target) : value;
  },
});

const configStore = await openConfigStore(store, gitDirFor(config));
const collectors = new Collectors(store, config.fleet.trustedAttributes);
const rollouts = new Rollouts(crashing, configStore, collectors, logger, { writeSlice: slice });
const rollout = await rollouts.publish({ actor: "sa:crash-test", remoteAddr: "127.0.0.1" }, strategy ? { strategy } : {});
process.stdout.write(`published ${rollout.id}\n`);
process.exit(0);
