/**
 * Target (issue 33 item 5): effective-config reports never hold the event
 * loop nor grow the state — `/healthz` p99 < 100 ms while collectors send
 * the largest reports they can, one after another.
 *
 * Seeds N OpAMP collectors with tokens (test/faults/storm.ts), starts the
 * real server as a child process, publishes one config to all of them (so
 * every report is judged for drift against a target), and connects them as
 * raw WebSocket agents from a client process. Then, per case, every agent
 * sends an EffectiveConfig, waits for the reply and sends the next, for
 * `seconds`, each report's text different (nothing is answered from a memo),
 * while this process polls `/healthz` every 20 ms. Cases: reports of ~4 MiB
 * (just under the OpAMP message limit: refused, over the cap) and reports
 * just under MAX_EFFECTIVE_CONFIG_BYTES (kept, redacted, judged for drift in
 * the drift worker). Prints the state file's growth (database and WAL) and
 * how many collectors had a drift answer at the end.
 *
 * Usage: bun bench/effective-config.ts [collectors=200] [seconds=20]
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentToServerSchema, ServerToAgentSchema } from "../server/gen/opamp/v1/opamp_pb.ts";
import { MAX_MESSAGE_BYTES } from "../server/opamp/channel.ts";
import { MAX_EFFECTIVE_CONFIG_BYTES } from "../server/rollout/effective-intake.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import { CAPS, description } from "../test/opamp/helpers.ts";
import { seedOpampFleet, type StormAgent } from "../test/faults/storm.ts";
import { freePort } from "../test/process/spawn.ts";
import { percentile } from "./lib.ts";

/** YAML of about `bytes` bytes whose first line is `salt`. */
const yamlOf = (bytes: number, salt: string) => `# ${salt}\nextensions:\n  x:\n${"    key: value\n".repeat(Math.floor((bytes - salt.length - 20) / 15))}`;

if (process.argv[2] === "attack") await attack(process.argv[3]!, process.argv[4]!, Number(process.argv[5]), Number(process.argv[6]));
else await main();

/** The client process: every agent reports, awaits the reply, and reports again, until the time is up; prints the count. */
async function attack(url: string, file: string, bytes: number, seconds: number): Promise<void> {
  const agents = JSON.parse(readFileSync(file, "utf8")) as StormAgent[];
  const padding = yamlOf(bytes, "");
  const deadline = performance.now() + seconds * 1000;
  let sent = 0;
  await Promise.all(
    agents.map(
      (agent, a) =>
        new Promise<void>((resolve) => {
          const uid = Buffer.from(agent.uid, "hex");
          let seq = 0n;
          const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${agent.token}` } } as unknown as string[]);
          ws.binaryType = "arraybuffer";
          const send = (fields: Record<string, unknown>) => {
            const body = toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uid, sequenceNum: ++seq, capabilities: CAPS, ...fields }));
            const frame = new Uint8Array(body.length + 1);
            frame.set(body, 1);
            ws.send(frame);
          };
          const report = () => {
            const text = `# agent ${a} report ${seq}\n${padding}`;
            send({ effectiveConfig: { configMap: { configMap: { "": { body: new TextEncoder().encode(text), contentType: "text/yaml" } } } } });
            sent++;
          };
          ws.onopen = () => send({ agentDescription: description({ "service.name": `bench-${a}` }) });
          ws.onmessage = (event) => {
            fromBinary(ServerToAgentSchema, new Uint8Array(event.data as ArrayBuffer).subarray(1));
            if (performance.now() > deadline) {
              ws.close();
              return resolve();
            }
            report();
          };
          ws.onerror = () => resolve();
          ws.onclose = () => resolve();
        }),
    ),
  );
  console.log(JSON.stringify({ sent }));
}

async function main(): Promise<void> {
  const [count = 200, seconds = 20] = process.argv.slice(2).map(Number);
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-effective-"));
  const statePath = join(dir, "state.db");
  const adminToken = "svcsa_" + "B".repeat(40);
  const store = new SqliteStore(statePath);
  const agents = await seedOpampFleet(store, count, "reporter");
  await store.close();
  const agentsFile = join(dir, "agents.json");
  writeFileSync(agentsFile, JSON.stringify(agents));

  const port = freePort();
  const server = Bun.spawn([process.execPath, join(import.meta.dir, "../server/main.ts")], {
    env: { ...process.env, SVC_LISTEN: `127.0.0.1:${port}`, SVC_STORAGE_BOLTPATH: statePath, SVC_BOOTSTRAP_ADMINTOKEN: adminToken, SVC_LOGGING_LEVEL: "error" },
    stdout: "inherit",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  const api = async (path: string, method = "GET", json?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${adminToken}`, ...(json ? { "Content-Type": "application/json" } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  try {
    for (
      let i = 0;
      !(await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    ) {
      if (i > 2400) throw new Error("the server was not ready within 60 s");
      await Bun.sleep(25);
    }
    await api("/sources", "POST", { name: "bench logs", type: "filelog", config: { include: ["/var/log/bench/*.log"] } });
    await api("/commit", "POST", { message: "bench" });
    const published = await api("/publish", "POST");
    const size = () => [statePath, `${statePath}-wal`].reduce((sum, file) => sum + (statSync(file, { throwIfNoEntry: false })?.size ?? 0), 0);

    console.log(
      `${count} collectors, ${seconds} s a case; ${(published.changed as string[]).length} targets published; cap ${MAX_EFFECTIVE_CONFIG_BYTES} bytes`,
    );
    console.log(`load average at start: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
    console.log("| Case | reports sent | `/healthz` polls | p50 | p99 | max | state file growth |");
    console.log("|---|---|---|---|---|---|---|");
    for (const [name, bytes] of [
      [`~4 MiB (${MAX_MESSAGE_BYTES - 64 * 1024} bytes, refused)`, MAX_MESSAGE_BYTES - 64 * 1024],
      [`largest kept (${MAX_EFFECTIVE_CONFIG_BYTES - 1024} bytes)`, MAX_EFFECTIVE_CONFIG_BYTES - 1024],
    ] as const) {
      const before = size();
      const client = Bun.spawn([process.execPath, import.meta.path, "attack", `ws://127.0.0.1:${port}/v1/opamp`, agentsFile, String(bytes), String(seconds)], {
        stdout: "pipe",
        stderr: "inherit",
      });
      const health: number[] = [];
      const poller = (async () => {
        while (client.exitCode === null) {
          const t0 = performance.now();
          const res = await fetch(`${base}/healthz`);
          await res.arrayBuffer();
          health.push(performance.now() - t0);
          await Bun.sleep(20);
        }
      })();
      const out = await new Response(client.stdout).text();
      await client.exited;
      await poller;
      const { sent } = JSON.parse(out.trim().split("\n").pop() || '{"sent":0}') as { sent: number };
      health.sort((a, b) => a - b);
      const growth = ((size() - before) / 1024 / 1024).toFixed(1);
      console.log(
        `| ${name} | ${sent} | ${health.length} | ${percentile(health, 50).toFixed(1)} ms | ${percentile(health, 99).toFixed(1)} ms | ${health[health.length - 1]!.toFixed(1)} ms | ${growth} MiB |`,
      );
    }
    // Drift answers trail the reports (one worker, one comparison at a time): how many collectors had one when the attack ended.
    const ids = ((await api(`/collectors?limit=${count}`)).items as { id: string }[]).map((c) => c.id);
    let judged = 0;
    for (const id of ids) if (((await api(`/collectors/${id}/effective-config`)).target as { drift?: unknown } | null)?.drift) judged++;
    console.log(`collectors with a drift answer at the end: ${judged} of ${count}`);
    console.log(`load average at end: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
  } finally {
    server.kill();
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
