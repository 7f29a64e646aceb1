import { expect, test } from "bun:test";
import { PushQueue } from "./push-queue.ts";

/** A push that takes a turn of the event loop, recording how many run at once. */
function recorder() {
  const pushed: string[] = [];
  let running = 0;
  let most = 0;
  const push = async (id: string) => {
    running++;
    most = Math.max(most, running);
    await Bun.sleep(0);
    pushed.push(id);
    running--;
  };
  return { pushed, push, most: () => most };
}

const settled = async (queue: PushQueue) => {
  while (queue.size > 0) await Bun.sleep(1);
  await Bun.sleep(5);
};

test("pushes one collector at a time, in the order queued; an id queued again before its turn is pushed once", async () => {
  const r = recorder();
  const queue = new PushQueue(r.push);
  // "a" starts at once; "b" is queued twice while waiting; "a" queued again after its push started
  // is pushed again (its target may have changed since that push read it).
  for (const id of ["a", "b", "c", "b", "a", "d"]) queue.add(id);
  await settled(queue);
  expect(r.pushed).toEqual(["a", "b", "c", "a", "d"]);
  expect(r.most()).toBe(1);
});

test("gives the event loop back between slices, so a large publish does not hold up other requests", async () => {
  const pushed: string[] = [];
  // A push that never leaves the microtask queue, as one whose reads all hit a cache, taking 1 ms each.
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  const queue = new PushQueue(async (id) => void (busy(1), pushed.push(id)), 10);
  for (let i = 0; i < 100; i++) queue.add(`c${i}`);
  let seenAt = -1;
  setImmediate(() => (seenAt = pushed.length));
  await settled(queue);
  expect(pushed).toHaveLength(100);
  expect(seenAt).toBeGreaterThan(0);
  expect(seenAt).toBeLessThan(100);
});

test("clear drops what is queued", async () => {
  const r = recorder();
  const queue = new PushQueue(r.push);
  for (const id of ["a", "b", "c"]) queue.add(id);
  queue.clear();
  await Bun.sleep(10);
  expect(r.pushed.length).toBeLessThanOrEqual(1);
});
