import { expect, test } from "bun:test";
import { UnavailableError } from "../errors.ts";
import { PasswordGate } from "./password-gate.ts";

test("runs at most `slots` at once, queues `queue` more, refuses the rest with 503 overloaded, and frees slots on failure too", async () => {
  const gate = new PasswordGate(2, 1);
  let running = 0;
  let peak = 0;
  const releases: (() => void)[] = [];
  const work = () =>
    gate.run(async () => {
      peak = Math.max(peak, ++running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
      return "done";
    });
  const admitted = [work(), work(), work()];
  const refused = await work().catch((error) => error);
  expect(refused).toBeInstanceOf(UnavailableError);
  expect([refused.status, refused.code, refused.headers["Retry-After"]]).toEqual([503, "overloaded", "1"]);
  await Bun.sleep(0);
  expect(releases).toHaveLength(2);
  releases.shift()!();
  await Bun.sleep(0);
  expect(releases).toHaveLength(2);
  for (const release of releases.splice(0)) release();
  expect(await Promise.all(admitted)).toEqual(["done", "done", "done"]);
  expect(peak).toBe(2);

  await expect(gate.run(() => Promise.reject(new Error("hash failed")))).rejects.toThrow("hash failed");
  expect(await Promise.all([gate.run(async () => 1), gate.run(async () => 2), gate.run(async () => 3)])).toEqual([1, 2, 3]);
});
