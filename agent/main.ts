#!/usr/bin/env bun
/**
 * `svc-agent`: the optional host agent (spec part 1.4). It discovers services
 * and log sources, answers bounded log-browsing requests and keeps one
 * outbound WebSocket to the server. It never installs, supervises or
 * configures a collector, and opens no port.
 *
 *   svc-agent --config <path>                  run
 *   svc-agent validate --config <path>         check a config file, exit 0/1
 *   svc-agent discover --config <path> --json  print one discovery report
 *   svc-agent --version
 */
import { Command, CommanderError } from "commander";
import pkg from "../package.json" with { type: "json" };
import { Agent } from "./agent.ts";
import { AgentConfigError, loadAgentConfig, type ParsedAgentConfig } from "./config.ts";
import { discoverInChild } from "./discovery/child.ts";
import { discover } from "./discovery/index.ts";
import { agentLogger } from "./log.ts";

const VERSION: string = pkg.version;

function fail(message: string, code = 1): never {
  process.stderr.write(`svc-agent: ${message}\n`);
  process.exit(code);
}

/** The config file, parsed, with the path it was read from. */
function load(path: string | undefined): ParsedAgentConfig & { path: string } {
  if (path === undefined) fail("--config <path> is required; there is no default path (packages use /etc/svc/config.yaml)", 2);
  try {
    return { ...loadAgentConfig(path), path };
  } catch (error) {
    if (error instanceof AgentConfigError) {
      fail(`invalid config ${path}:\n${error.problems.map((p) => `  ${p.key}: ${p.message}`).join("\n")}`);
    }
    throw error;
  }
}

async function run(path: string | undefined): Promise<void> {
  const { config, notices, path: configPath } = load(path);
  let log;
  try {
    log = agentLogger(config.logging);
  } catch (error) {
    fail(`logging.file: ${(error as Error).message}`);
  }
  for (const notice of notices) log.info(notice);
  const agent = new Agent(config, log, VERSION, () => discoverInChild(configPath));
  await agent.start();
  const stop = (signal: string) => {
    log.info({ signal }, "stopping");
    agent.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

const program = new Command("svc-agent")
  .description("svc host agent: discovery, log browsing and the outbound channel to the svc server")
  .version(VERSION, "-v, --version")
  .enablePositionalOptions()
  .option("-c, --config <path>", "the agent config file (required; e.g. /etc/svc/config.yaml)")
  .exitOverride()
  .action((options: { config?: string }) => run(options.config));

program
  .command("validate")
  .description("check a config file: exit 0 when valid, 1 naming every problem by key")
  .option("-c, --config <path>", "the agent config file")
  .action((options: { config?: string }) => {
    const { notices } = load(options.config);
    for (const notice of notices) process.stdout.write(`note: ${notice}\n`);
    process.stdout.write(`${options.config}: valid\n`);
  });

program
  .command("discover")
  .description("run discovery once, print the report and exit")
  .option("-c, --config <path>", "the agent config file")
  .option("--json", "print JSON (the default and only format)")
  .action(async (options: { config?: string }) => {
    const { config } = load(options.config);
    process.stdout.write(JSON.stringify(await discover(config), null, 2) + "\n");
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander has printed its own message (unknown option, --version, --help).
  if (error instanceof CommanderError) process.exit(error.exitCode);
  fail((error as Error).message);
}
