/**
 * Run by url.test.ts in a process started with NODE_EXTRA_CA_CERTS=<dir>/cert.pem
 * (a CA only this process trusts, for hooks.test): delivers to
 * https://hooks.test and https://wrong.test, both resolved by the sender's
 * lookup to a TLS receiver on 127.0.0.1, and prints what happened as JSON.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { SYSTEM_ACTOR } from "../../audit/audit.ts";
import { Secrets } from "../../secrets/secrets.ts";
import { SqliteStore } from "../../store/sqlite.ts";
import { WebhookSender } from "../deliver.ts";
import { Webhooks } from "../webhooks.ts";

const dir = process.argv[2]!;
const hosts: string[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") },
  fetch: (req) => (hosts.push(req.headers.get("host") ?? ""), new Response("")),
});
const store = new SqliteStore(":memory:");
const hooks = new Webhooks(store, new Secrets([randomBytes(32)]), Date.now, true);
const sender = new WebhookSender(store, hooks, pino({ level: "silent" }), { lookup: async () => ["127.0.0.1"] });
const results: Record<string, { status: string; error: string | null }> = {};
for (const name of ["hooks.test", "wrong.test"]) {
  const hook = await hooks.create(SYSTEM_ACTOR, { url: `https://${name}:${server.port}/hook`, events: ["rollout.completed"], secret: "s3cret-s3cret-s3cret" });
  await hooks.emit("rollout.completed", name, {});
  await sender.tick();
  const [entry] = await hooks.deliveries(hook.id);
  results[name] = { status: entry!.status, error: entry!.error };
  await hooks.delete(SYSTEM_ACTOR, hook.id);
}
const port = server.port;
server.stop(true);
await store.close();
console.log(JSON.stringify({ results, hosts, port }));
