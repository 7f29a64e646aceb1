/**
 * The agent's own credential (`svcag_…`): the server mints it when this host
 * first enrolls and from then on refuses the host's id without it, so an
 * enrollment token alone cannot take the host over. It lives in one file in
 * the state directory, 0600 in a 0700 directory, written by rename so a crash
 * leaves the old file or the new one. The file names the agent id it belongs
 * to: a credential of another id (agent.id changed) is not presented.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CREDENTIAL_FILE = "credential.json";
const CREDENTIAL = /^svcag_[A-Za-z0-9]{32,}$/;

export class CredentialFile {
  readonly path: string;
  /** Kept in memory too: a state directory that cannot be written still serves this process's reconnects. */
  #current: string | null;

  constructor(
    private readonly dir: string,
    private readonly agentId: string,
  ) {
    this.path = join(dir, CREDENTIAL_FILE);
    this.#current = this.#read();
  }

  get current(): string | null {
    return this.#current;
  }

  /** Stores a newly issued credential; throws when the file cannot be written (the caller logs it). */
  save(credential: string): void {
    if (!CREDENTIAL.test(credential)) throw new Error("the server sent a malformed agent credential");
    this.#current = credential;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify({ agentId: this.agentId, credential }) + "\n", { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.path);
  }

  #read(): string | null {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch {
      return null;
    }
    try {
      const stored = JSON.parse(text) as { agentId?: unknown; credential?: unknown };
      return stored.agentId === this.agentId && typeof stored.credential === "string" && CREDENTIAL.test(stored.credential) ? stored.credential : null;
    } catch {
      return null;
    }
  }
}
