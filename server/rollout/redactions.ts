/**
 * Takes out of what a collector sends back (its errors, its effective
 * config) every secret it may have been delivered: a collector's message may
 * quote its config. One redactor per collector, built from the secrets named
 * by any config pushed to it and rebuilt when its target seq moves (a new
 * target may name other secrets); svc tokens are cut short too.
 */
import { redactTokens } from "../auth/tokens.ts";
import { plaintextRedactor } from "../render/redact.ts";
import { markedSecrets } from "../secrets/values.ts";
import { MissingSecretError, type SecretVault } from "../secrets/vault.ts";
import type { Store } from "../store/store.ts";
import { HISTORY, type HistoryEntry } from "./records.ts";
import type { RenderedConfig } from "./renderer.ts";

/** One collector's secrets as a redactor, built at a target seq. */
interface Redaction {
  seq: number;
  redact: (text: string) => string;
}

export class Redactions {
  /** Per collector, built when it first reports something to redact. */
  private readonly byCollector = new Map<string, Redaction>();

  constructor(
    private readonly store: Pick<Store, "list">,
    private readonly vault: Pick<SecretVault, "open">,
    /** The collector's target seq, 0 without one. */
    private readonly targetSeq: (collectorId: string) => Promise<number>,
    private readonly rendered: (hash: string) => Promise<RenderedConfig | null>,
  ) {}

  /**
   * `text` with every secret this collector may have been delivered (those
   * named by any config pushed to it) replaced by its marker, however the
   * text spells it (see render/redact.ts), and any svc token cut short. Markers already there stay, so
   * redacting twice changes nothing. A secret this server cannot open is
   * left out: it cannot have been delivered from here.
   */
  async redact(collectorId: string, text: string): Promise<string> {
    return redactTokens((await this.redaction(collectorId)).redact(text));
  }

  /** Drops one collector's redactor (it was deleted), or all of them (`undefined`: a rendered config changed, or the feed resynced). */
  forget(collectorId?: string): void {
    if (collectorId === undefined) this.byCollector.clear();
    else this.byCollector.delete(collectorId);
  }

  private async redaction(collectorId: string): Promise<Redaction> {
    // Read before the history, so the history listed holds every entry up to it.
    const seq = await this.targetSeq(collectorId);
    const known = this.byCollector.get(collectorId);
    if (known?.seq === seq) return known;
    const ids = new Set<string>();
    const hashes = new Set((await this.store.list<HistoryEntry>(HISTORY, { prefix: `${collectorId}/` })).map((d) => d.data.hash));
    for (const hash of hashes) for (const id of markedSecrets((await this.rendered(hash))?.body ?? "")) ids.add(id);
    const sealed: [string, string][] = [];
    for (const id of ids) {
      try {
        sealed.push([await this.vault.open(id), id]);
      } catch (error) {
        if (!(error instanceof MissingSecretError)) throw error;
      }
    }
    const redaction: Redaction = { seq, redact: plaintextRedactor(sealed) };
    this.byCollector.set(collectorId, redaction);
    return redaction;
  }
}
