/**
 * `/v1/bootstrap?file=<path>`: the files install.sh writes on a host, rendered
 * from installer/templates/ for the token it presents — an agent enrollment
 * token gets the agent config, an opamp enrollment token the Runtime O
 * collector and supervisor configs, an rcfg collector's own token the Runtime R
 * file. Presenting a token redeems nothing: the agent or the collector does that
 * when it connects. An agent token must still have a use left.
 */
import { tokenKind } from "../auth/tokens.ts";
import { AppError, NotFoundError, UnauthenticatedError, ValidationError } from "../errors.ts";
import type { Channel, ChannelHealth, ChannelRequest } from "../channel/channel.ts";
import { channelCredential } from "../channel/credential.ts";
import type { BootstrapFile } from "../../shared/enrollment.ts";
import { agentConfigFile, bootstrapFiles, collectorUrl } from "./bootstrap.ts";
import type { Enrollment } from "./enrollment.ts";
import type { CollectorTokens } from "../collectors/tokens.ts";

export interface BootstrapDeps {
  enrollment: Enrollment;
  collectorTokens: CollectorTokens;
  /** Read per request: the quick-start sets it once it knows the URL it serves. */
  externalUrl: () => string;
}

export class BootstrapChannel implements Channel {
  readonly name = "bootstrap";
  readonly path = "/v1/bootstrap";

  constructor(private readonly deps: BootstrapDeps) {}

  async handle(ctx: ChannelRequest): Promise<Response> {
    const { req, url } = ctx;
    if (req.method !== "GET") throw new AppError(405, "method_not_allowed", "Bootstrap files are read with GET.", [], { Allow: "GET" });
    const credential = channelCredential(ctx, "any");
    if (!credential.ok) throw new UnauthenticatedError("An enrollment token or a collector token is required as a Bearer credential.");
    const files = await this.filesFor(credential.token);
    const path = url.searchParams.get("file");
    if (path === null) {
      throw new ValidationError(`Name the file with ?file=; this token renders ${files.map((f) => f.path).join(", ")}.`, [
        { path: "file", message: "is required" },
      ]);
    }
    const file = files.find((f) => f.path === path);
    if (!file) throw new NotFoundError(`Bootstrap file for this token`, path);
    return new Response(file.body, { headers: { "Content-Type": `${file.contentType}; charset=utf-8`, "Cache-Control": "no-store" } });
  }

  private async filesFor(token: string): Promise<BootstrapFile[]> {
    const url = () => collectorUrl(this.deps.externalUrl());
    if (tokenKind(token) === "enrollment") {
      const agent = await this.deps.enrollment.usableForAgent(token);
      if (agent) return [agentConfigFile(url(), token, agent.environment ?? "production")];
      if (await this.deps.enrollment.usableForOpamp(token)) return bootstrapFiles("otelcol", url(), "", token);
    }
    if (tokenKind(token) === "collector") {
      const collectorId = await this.deps.collectorTokens.verify(token);
      if (collectorId !== null) return bootstrapFiles("alloy", url(), collectorId, token);
    }
    throw new UnauthenticatedError("The token is not a live enrollment token with a use left, nor a current collector token.");
  }

  health(): ChannelHealth {
    return { state: "up" };
  }
}
