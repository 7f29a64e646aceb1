/**
 * Alloy's remote-config client in tests: test/peers/bin/alloy-remotecfg
 * (test/peers/alloy/alloy-remotecfg/main.go, Alloy v1.18.1's remotecfg
 * service on grafana/alloy-remote-config and connect-go), configured by the
 * bootstrap file svc writes for the collector and driven one step at a time:
 * each step answers with every call it made and the client's state after it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { within } from "../opamp/helpers.ts";
import { peer } from "../peers/peers.ts";

/** One Connect call as the client made it (protojson, camelCase fields) and its answer or error. */
export interface AlloyCall {
  method: "GetConfig" | "RegisterCollector" | "UnregisterCollector";
  request: {
    id: string;
    hash?: string;
    name?: string;
    localAttributes: Record<string, string>;
    remoteConfigStatus?: { status: string; errorMessage: string } | null;
    effectiveConfig?: { configMap: { configMap: Record<string, { body: string; contentType: string }> } } | null;
  };
  response?: { content?: string; hash?: string; notModified?: boolean };
  error?: { code: string; message: string };
}

export interface AlloyStep {
  command: string;
  calls: AlloyCall[];
  log: string[];
  /** A failed start (Alloy exits) or reload (Alloy keeps what it runs). */
  error?: string;
  /** The remote config status it holds, e.g. RemoteConfigStatuses_APPLIED. */
  status: string;
  errorMessage: string;
  /** The server's hash it sends back. */
  remoteHash: string;
  lastLoaded: string;
  lastReceived: string;
  /** The config it runs now. */
  running: string;
}

/** A step's deadline: a few calls on loopback, generous for a loaded machine. */
const STEP_MS = 30_000;

export class AlloyClient {
  private readonly dir = mkdtempSync(join(tmpdir(), "alloy-remotecfg-"));
  readonly configPath = join(this.dir, "config.alloy");
  private readonly child: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
  private readonly lines: AsyncIterator<string>;

  /** A client whose config file is `bootstrap` (the body of svc's Runtime R bootstrap file). */
  constructor(bootstrap: string) {
    writeFileSync(this.configPath, bootstrap);
    this.child = Bun.spawn([peer("alloyRemotecfg"), "-config", this.configPath, "-storage", join(this.dir, "data")], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    this.lines = lines(this.child.stdout);
  }

  /** Replaces the config file, as an operator editing it before a reload or restart. */
  rewrite(bootstrap: string): void {
    writeFileSync(this.configPath, bootstrap);
  }

  /** Runs one step (start, poll, reload, stop) and answers what it did. */
  async step(command: "start" | "poll" | "reload" | "stop"): Promise<AlloyStep> {
    this.child.stdin.write(`${command}\n`);
    await this.child.stdin.flush();
    const next = await within(this.lines.next(), STEP_MS, `alloy-remotecfg's answer to ${command}`);
    if (next.done) throw new Error(`alloy-remotecfg ended before answering ${command}: ${await new Response(this.child.stderr).text()}`);
    return JSON.parse(next.value) as AlloyStep;
  }

  async close(): Promise<void> {
    this.child.kill();
    await this.child.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let cut = buffered.indexOf("\n"); cut >= 0; cut = buffered.indexOf("\n")) {
      yield buffered.slice(0, cut);
      buffered = buffered.slice(cut + 1);
    }
  }
}

/** The content of an effective config's file as the client sent it (protojson writes bytes as base64). */
export function effectiveBody(call: AlloyCall): string | undefined {
  const file = call.request.effectiveConfig?.configMap.configMap[""];
  return file && Buffer.from(file.body, "base64").toString("utf8");
}
