import { expect, test } from "bun:test";
import { collectorUrl } from "../enrollment/bootstrap.ts";
import { listenFallbackUrl } from "./external-url.ts";

test("the quick-start fallback is the served URL, a wildcard bind named by loopback, and collectors accept it", () => {
  for (const [served, fallback] of [
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080"],
    ["http://0.0.0.0:8080", "http://127.0.0.1:8080"],
    ["http://[::]:9000", "http://[::1]:9000"],
    ["https://localhost:8443", "https://localhost:8443"],
  ] as const) {
    expect(listenFallbackUrl(new URL(served))).toBe(fallback);
    expect(collectorUrl(listenFallbackUrl(new URL(served))).origin).toBe(fallback);
  }
});
