import { describe, expect, test } from "bun:test";
import { StorageUnavailableError } from "../errors.ts";
import { ExternalStore } from "./external.ts";

/** An adapter whose attempts to open fail as scripted, then succeed. */
class Scripted extends ExternalStore {
  /** The store made last, for a test whose open threw instead of returning it. */
  static last: Scripted | null = null;
  released = 0;
  attempts = 0;

  constructor(private readonly failures: Error[]) {
    super("TestDB");
    Scripted.last = this;
  }

  static open(failures: Error[]): Promise<Scripted> {
    return new Scripted(failures).openNow();
  }

  static connect(failures: Error[], onRetry?: (error: Error) => void): { store: Scripted; ready: Promise<void> } {
    return new Scripted(failures).openLater({ backoff: { minMs: 1, maxMs: 2 }, ...(onRetry ? { onRetry } : {}) });
  }

  protected async attach(): Promise<void> {
    const failure = this.failures[this.attempts++];
    if (failure) throw failure;
  }

  protected retryableAtOpen(error: unknown): boolean {
    return (error as Error).message.startsWith("unreachable");
  }

  protected async release(): Promise<void> {
    this.released++;
  }

  /** An operation as the adapters run them. */
  operate(): string {
    this.assertOpen();
    return "done";
  }
}

describe("ExternalStore lifecycle", () => {
  test("open: opened at once, or closed (connections released) and the failure thrown", async () => {
    expect((await Scripted.open([])).operate()).toBe("done");
    const failure = new Error("unreachable: refused");
    await expect(Scripted.open([failure])).rejects.toBe(failure);
    expect(Scripted.last!.attempts).toBe(1);
    expect(Scripted.last!.released).toBe(1);
    expect(() => Scripted.last!.operate()).toThrow("the TestDB store is closed");
  });

  test("connect: unavailable, naming the last failure, until open; then operations run", async () => {
    const retried: string[] = [];
    const { store, ready } = Scripted.connect([new Error("unreachable: one"), new Error("unreachable: two")], (e) => retried.push(e.message));
    expect(() => store.operate()).toThrow(StorageUnavailableError);
    expect(() => store.operate()).toThrow("The database (TestDB) is not reachable yet");
    await ready;
    expect(retried).toEqual(["unreachable: one", "unreachable: two"]);
    expect(store.attempts).toBe(3);
    expect(store.operate()).toBe("done");
    await store.close();
    await store.close();
    expect(store.released).toBe(1);
    expect(() => store.operate()).toThrow("the TestDB store is closed");
  });

  test("connect: a failure waiting cannot fix ends the attempts; closing first rejects ready", async () => {
    const fatal = new Error("schema newer than this server");
    const { store, ready } = Scripted.connect([new Error("unreachable"), fatal]);
    await expect(ready).rejects.toBe(fatal);
    expect(() => store.operate()).toThrow("The database (TestDB) is not reachable yet: unreachable;");
    const never = Scripted.connect(Array.from({ length: 1000 }, () => new Error("unreachable")));
    await never.store.close();
    await expect(never.ready).rejects.toThrow("the TestDB store was closed before it could open");
  });
});
